import { useCallback, useEffect, useState } from 'react';
import type { ThreadDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';

/** The user's threads, 50 at a time (`load(cursor)` adds the next page); loaded once the session has a token. */
export function useThreadList(token: string | null, onFatal: (message: string) => void) {
  const [threads, setThreads] = useState<ThreadDto[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const load = useCallback(
    async (cursor?: string) => {
      if (!token) return;
      const page = await requestJson<{ threads: ThreadDto[]; nextCursor: string | null }>(
        `/api/threads?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      setThreads((current) => {
        const byId = new Map((cursor ? current : []).map((thread) => [thread.id, thread]));
        for (const thread of page.threads) byId.set(thread.id, thread);
        return [...byId.values()];
      });
      setNextCursor(page.nextCursor);
      setLoaded(true);
    },
    [token],
  );
  useEffect(() => {
    load().catch((error: unknown) => onFatal(ApiError.from(error).message));
  }, [load, onFatal]);
  return { threads, setThreads, nextCursor, loaded, load };
}

export type ThreadList = ReturnType<typeof useThreadList>;
