import { useCallback, useEffect, useRef, useState } from 'react';
import type { ContextPackDto, MessageContextDto, MessageDto, ThreadDetailDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import type { MemoryData } from './memory-panel';
import type { ThreadEventListener } from './thread-store';

/** The thread's latest finished answer: its manifest says what auto-recall gave the model for it. */
export function latestAnswerOf(messages: MessageDto[] | undefined): MessageDto | null {
  return (
    messages?.findLast(
      (message) =>
        message.role === 'assistant' &&
        message.status === 'complete' &&
        !message.superseded &&
        !message.deleted &&
        message.seq !== null,
    ) ?? null
  );
}

/** The context pack, the thread's detail and (for the latest answer) what auto-recall gave the model. */
function loadMemory(token: string, threadId: string, answer: MessageDto | null) {
  return Promise.all([
    requestJson<ContextPackDto>(`/api/threads/${threadId}/context`, { token }),
    requestJson<ThreadDetailDto>(`/api/threads/${threadId}`, { token }),
    // A missing manifest (an answer stored before manifests) only leaves the line out.
    answer
      ? requestJson<MessageContextDto>(`/api/threads/${threadId}/messages/${answer.id}/context`, { token }).catch(
          () => null,
        )
      : Promise.resolve(null),
  ]).then(([pack, detail, seen]): MemoryData => ({
    pack,
    detail,
    recalled: seen && answer?.seq != null ? { answerSeq: answer.seq, seqs: seen.recalledSeqs } : null,
  }));
}

/**
 * What the memory panel shows of the open thread: loaded when the panel opens, refreshed after the thread's events
 * while it is open (at once after a summary, else once the events calm down).
 */
export function useMemoryData(input: { token: string | null; threadId: string | null; memoryOpen: boolean }) {
  const { token, threadId, memoryOpen } = input;
  const [memory, setMemory] = useState<MemoryData | null>(null);
  const [memoryError, setMemoryError] = useState<string | null>(null);
  const memoryTimer = useRef<number | undefined>(undefined);
  // The latest answer, set by the caller at each render and read when the panel refreshes.
  const latestAnswer = useRef<MessageDto | null>(null);
  const refreshMemory = useCallback(() => {
    if (!token || !threadId) return;
    const answer = latestAnswer.current?.threadId === threadId ? latestAnswer.current : null;
    loadMemory(token, threadId, answer).then(
      (data) => {
        setMemory(data);
        setMemoryError(null);
      },
      (error: unknown) => setMemoryError(ApiError.from(error).message),
    );
  }, [token, threadId]);

  useEffect(() => {
    setMemory(null);
    if (memoryOpen) refreshMemory();
  }, [memoryOpen, refreshMemory]);

  const onThreadEvent: ThreadEventListener = useCallback(
    (event) => {
      if (!memoryOpen) return;
      window.clearTimeout(memoryTimer.current);
      memoryTimer.current = window.setTimeout(refreshMemory, event === 'summary-updated' ? 0 : 400);
    },
    [memoryOpen, refreshMemory],
  );

  return { memory, memoryError, latestAnswer, onThreadEvent };
}
