import { useEffect, useMemo, useReducer, useRef } from 'react';
import type { MessageCopyDto, MessageDto } from '../../../src/shared/api';
import type { ChatSocket, ConnectionStatus } from '../api/use-chat-socket';
import { useLatestRef } from '../common/use-latest-ref';
import { threadReducer } from './thread-reducer';
import * as requests from './thread-requests';
import type { ThreadState } from './thread-state';
import type { ThreadEventListener, ThreadStore } from './thread-store';
import { useHistoryPaging } from './use-history-paging';
import { useSendQueue } from './use-send-queue';
import { useThreadEvents } from './use-thread-events';
import { useJoinedFlag, useThreadJoin } from './use-thread-join';
import { useToolRunFetch } from './use-tool-run-fetch';

export type { ThreadEventListener } from './thread-store';

export interface ThreadActions {
  send(content: string): void;
  stop(): void;
  loadOlder(): Promise<void>;
  retryAnswer(message: MessageDto): void;
  resend(clientMessageId: string): void;
  discard(clientMessageId: string): void;
  cancelTool(runId: string): void;
  dismissNotice(): void;
  /** Pins or unpins a message (its whole tool exchange); a refusal (the pinned-tokens cap) becomes the notice. */
  setPinned(message: MessageDto, pinned: boolean): void;
  /** Forgets a message, by default with its answer (`only`: just this one). */
  forget(message: MessageDto, options?: { only?: boolean }): void;
  /** Answers the last user message again. */
  regenerate(): void;
  /** "Start a new context here", or its undo. */
  resetContext(undo?: boolean): void;
  /** Loads older pages until the transcript holds `seq` (or the beginning). */
  loadThrough(seq: number): Promise<void>;
}

/** The thread's reducer, with its state also in a ref read at call time (see `ThreadStore`). */
function useThreadStore(onEvent: ThreadEventListener | undefined): { state: ThreadState | null; store: ThreadStore } {
  const [state, dispatch] = useReducer(threadReducer, null);
  const stateRef = useRef<ThreadState | null>(null);
  stateRef.current = state;
  const onEventRef = useLatestRef(onEvent);
  const store = useMemo(() => ({ stateRef, dispatch, onEventRef }), [onEventRef]);
  return { state, store };
}

/**
 * The live state of one thread: joined over the socket (with `afterSeq` catch-up after a reconnect),
 * events merged without duplicates, older pages over REST, and an outbox sent once when the connection allows.
 */
export function useThread(input: {
  socket: ChatSocket | null;
  status: ConnectionStatus;
  token: string | null;
  threadId: string | null;
  onEvent?: ThreadEventListener;
  onForgotten?: (copies: MessageCopyDto[]) => void;
}) {
  const { socket, status, token, threadId } = input;
  const { state, store } = useThreadStore(input.onEvent);
  const { joined, joinedRef, setJoined } = useJoinedFlag();
  // Told which other threads (branches) still hold a copy of what a forget erased here.
  const onForgottenRef = useLatestRef(input.onForgotten);
  // Read at call time: a refreshed token must not re-run the join effect (a leave and a join per refresh).
  const tokenRef = useLatestRef(token);

  // A new thread starts empty; the join below fills it.
  useEffect(() => {
    store.dispatch({ type: 'thread-opened', threadId });
    setJoined(false);
  }, [store, threadId, setJoined]);

  const fetchToolRuns = useToolRunFetch(store, tokenRef);
  const outbox = useSendQueue({ store, socket, status, threadId, joined, joinedRef });
  useThreadJoin({ store, socket, status, threadId, setJoined, fetchToolRuns, flushOutbox: outbox.flushOutbox });
  useThreadEvents({ store, socket, threadId, fetchToolRuns });
  const paging = useHistoryPaging({ store, token, fetchToolRuns });

  const context: requests.RequestContext = { store, socket, token, threadId, onForgottenRef };
  const actions: ThreadActions = {
    send: outbox.send,
    resend: outbox.resend,
    discard: outbox.discard,
    loadOlder: paging.loadOlder,
    loadThrough: paging.loadThrough,
    stop: () => requests.stopTurn(context),
    retryAnswer: (message) => requests.retryAnswer(context, message),
    cancelTool: (runId) => requests.cancelTool(context, runId),
    dismissNotice: () => store.dispatch({ type: 'notice', error: null }),
    setPinned: (message, pinned) => requests.setPinned(context, message, pinned),
    forget: (message, options) => requests.forget(context, message, options),
    regenerate: () => requests.regenerate(context),
    resetContext: (undo) => requests.resetContext(context, undo),
  };

  return { state, joined, actions };
}
