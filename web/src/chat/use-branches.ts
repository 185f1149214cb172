import { useCallback, useEffect, useState } from 'react';
import type {
  EditMessageResponseDto,
  ForkListDto,
  ForkSummaryDto,
  MessageDto,
  ThreadDto,
} from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import type { ChatSocket } from '../api/use-chat-socket';
import { navigate } from '../common/navigation';
import type { BranchControls } from './conversation';
import { newClientId } from './new-client-id';
import type { ThreadList } from './use-thread-list';

/** An edit makes a branch: over the socket the ack comes at once and the answer streams there; without one, REST waits for it. */
function editAsBranch(input: {
  socket: ChatSocket | null;
  token: string | null;
  message: MessageDto;
  content: string;
}): Promise<ThreadDto> {
  const { socket, token, message, content } = input;
  const clientMessageId = newClientId();
  return socket?.connected
    ? socket
        .timeout(15_000)
        .emitWithAck('message-edit', { threadId: message.threadId, messageId: message.id, content, clientMessageId })
        .then((ack) => {
          if (!ack.ok) throw new ApiError(ack.error);
          return ack.thread;
        })
    : requestJson<EditMessageResponseDto>(`/api/threads/${message.threadId}/messages/${message.id}/edit`, {
        method: 'POST',
        json: { content, clientMessageId },
        token,
      }).then((result) => result.thread);
}

/** The branches of the open thread (listed at their fork points), and branching or editing into a new one. */
export function useBranches(input: {
  token: string | null;
  threadId: string | null;
  socket: ChatSocket | null;
  list: ThreadList;
  /** Opening a branch ends the highlight of a search hit. */
  clearHighlight(): void;
  onFatal(message: string): void;
}): BranchControls {
  const { token, threadId, socket, list, clearHighlight, onFatal } = input;
  const [forks, setForks] = useState<ForkSummaryDto[]>([]);
  const loadForks = useCallback(() => {
    if (!token || !threadId) return;
    requestJson<ForkListDto>(`/api/threads/${threadId}/forks`, { token }).then(
      (result) => setForks(result.forks),
      () => setForks([]),
    );
  }, [token, threadId]);
  useEffect(() => {
    setForks([]);
    loadForks();
  }, [loadForks]);
  const openThread = useCallback(
    (id: string) => {
      clearHighlight();
      navigate(`/threads/${id}`);
    },
    [clearHighlight],
  );
  const opened = (fork: ThreadDto) => {
    list.setThreads((current) => [fork, ...current.filter((candidate) => candidate.id !== fork.id)]);
    navigate(`/threads/${fork.id}`);
  };
  const fail = (error: unknown) => onFatal(ApiError.from(error).message);
  return {
    forks,
    openThread,
    branch(message) {
      requestJson<ThreadDto>(`/api/threads/${message.threadId}/fork`, {
        method: 'POST',
        json: { atMessageId: message.id },
        token,
      }).then(opened, fail);
    },
    edit(message, content) {
      editAsBranch({ socket, token, message, content }).then(opened, fail);
    },
  };
}
