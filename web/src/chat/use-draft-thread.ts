import { useCallback, useEffect, useRef } from 'react';
import type { ThreadDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { navigate } from '../common/navigation';
import type { ThreadList } from './use-thread-list';

/** A new chat before its first message (no thread exists yet). */
export const NEW_CHAT_PATH = '/new';

/**
 * The draft's first message creates the thread, opens it and is sent there (through its outbox, once it is shown).
 * Returns the draft's send.
 */
export function useDraftThread(input: {
  token: string | null;
  list: ThreadList;
  /** The thread shown now (its state's id), and its send. */
  shownThreadId: string | null | undefined;
  send(content: string): void;
  onFatal(message: string): void;
}) {
  const { token, list, shownThreadId, send, onFatal } = input;
  const firstMessage = useRef<{ threadId: string; content: string } | null>(null);
  const creating = useRef(false);
  const startThread = useCallback(
    async (content: string) => {
      if (!token || creating.current) return;
      creating.current = true;
      try {
        const created = await requestJson<ThreadDto>('/api/threads', { method: 'POST', json: {}, token });
        list.setThreads((current) => [created, ...current.filter((candidate) => candidate.id !== created.id)]);
        firstMessage.current = { threadId: created.id, content };
        navigate(`/threads/${created.id}`, { replace: window.location.pathname === NEW_CHAT_PATH });
      } catch (error) {
        onFatal(ApiError.from(error).message);
      } finally {
        creating.current = false;
      }
    },
    [token, list, onFatal],
  );
  useEffect(() => {
    const pending = firstMessage.current;
    if (!pending || shownThreadId !== pending.threadId) return;
    firstMessage.current = null;
    send(pending.content);
  }, [shownThreadId, send]);
  return startThread;
}
