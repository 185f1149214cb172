import type { Dispatch, MutableRefObject } from 'react';
import type { ThreadAction } from './thread-reducer';
import { threadReducer } from './thread-reducer';
import type { ThreadState } from './thread-state';

/** Called with every thread event (e.g. to refresh the memory panel or the thread list). */
export type ThreadEventListener = (event: 'message' | 'summary-updated' | 'turn-end' | 'thread-updated') => void;

/** What the hooks of one thread share: its state as of the last render (or newer), and the reducer's dispatch. */
export interface ThreadStore {
  /** Read at call time; a caller that must see its change before React renders applies it with `applyNow`. */
  stateRef: MutableRefObject<ThreadState | null>;
  dispatch: Dispatch<ThreadAction>;
  onEventRef: MutableRefObject<ThreadEventListener | undefined>;
}

/** Applies `action` to `base` (by default the ref's state) in the ref at once, for callers that read it again before the next render. */
export function applyNow(store: ThreadStore, action: ThreadAction, base = store.stateRef.current): void {
  store.stateRef.current = threadReducer(base, action);
}
