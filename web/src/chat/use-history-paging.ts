import { useCallback } from 'react';
import type { MessageDto, MessagePageDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { lowestSeq } from './thread-state';
import { applyNow, type ThreadStore } from './thread-store';

const PAGE_SIZE = 30;
/** The server's largest page, used to reach a cited or searched message far up in one or a few requests. */
const MAX_PAGE_SIZE = 200;
/** Messages loaded above a message jumped to, so it is read in its context. */
const CONTEXT_ABOVE = 10;

/** Loads one page above the lowest message held; false when there was nothing (more) to load. */
function useLoadPage(store: ThreadStore, token: string | null, fetchToolRuns: (messages: MessageDto[]) => void) {
  return useCallback(
    async (limit = PAGE_SIZE): Promise<boolean> => {
      const current = store.stateRef.current;
      const before = current ? lowestSeq(current) : null;
      if (!current || before === null || !current.hasMoreBefore) return false;
      const page = await requestJson<MessagePageDto>(
        `/api/threads/${current.threadId}/messages?before=${before}&limit=${limit}`,
        { token },
      );
      const action = { type: 'page-loaded', messages: page.messages, hasMoreBefore: page.hasMoreBefore } as const;
      // Kept in the ref at once: a caller paging in a loop reads the new lowest seq before React renders.
      applyNow(store, action, current);
      store.dispatch(action);
      fetchToolRuns(page.messages);
      return page.messages.length > 0;
    },
    [store, token, fetchToolRuns],
  );
}

/** Older pages over REST: one page ("Load older"), or as many as reach a message jumped to (a citation, a search hit). */
export function useHistoryPaging(input: {
  store: ThreadStore;
  token: string | null;
  fetchToolRuns: (messages: MessageDto[]) => void;
}) {
  const { store, token, fetchToolRuns } = input;
  const { stateRef, dispatch } = store;
  const loadPage = useLoadPage(store, token, fetchToolRuns);
  const fail = (error: unknown) => dispatch({ type: 'notice', error: ApiError.from(error) });

  async function loadOlder() {
    try {
      await loadPage();
    } catch (error) {
      fail(error);
    }
  }

  /** Loads older pages until the transcript holds `seq` (or the beginning). */
  async function loadThrough(seq: number) {
    try {
      for (;;) {
        const lowest = stateRef.current ? lowestSeq(stateRef.current) : null;
        if (lowest !== null && lowest <= seq) return;
        // Exactly what is missing down to the message (and a few above it), up to the server's largest page.
        const limit =
          lowest === null ? PAGE_SIZE : Math.min(MAX_PAGE_SIZE, Math.max(PAGE_SIZE, lowest - seq + CONTEXT_ABOVE));
        if (!(await loadPage(limit))) return;
      }
    } catch (error) {
      fail(error);
    }
  }

  return { loadOlder, loadThrough };
}
