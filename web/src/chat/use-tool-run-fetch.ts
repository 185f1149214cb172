import { useCallback, type MutableRefObject } from 'react';
import type { MessageDto, ToolRunDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import type { ThreadStore } from './thread-store';

/** Loads the tool runs of `messages` this tab does not know yet (one request each). */
export function useToolRunFetch(store: ThreadStore, tokenRef: MutableRefObject<string | null>) {
  const { stateRef, dispatch } = store;
  return useCallback(
    (messages: MessageDto[]) => {
      const known = stateRef.current?.toolRuns ?? {};
      const ids = [
        ...new Set(
          messages.map((message) => message.toolRunId).filter((id): id is string => Boolean(id) && !known[id!]),
        ),
      ];
      for (const id of ids) {
        requestJson<ToolRunDto>(`/api/tool-runs/${id}`, { token: tokenRef.current }).then(
          (run) => dispatch({ type: 'tool-run-updated', run }),
          (error: unknown) => dispatch({ type: 'notice', error: ApiError.from(error) }),
        );
      }
    },
    [stateRef, dispatch, tokenRef],
  );
}
