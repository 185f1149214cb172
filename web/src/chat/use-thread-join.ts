import { useCallback, useEffect, useRef, useState } from 'react';
import type { MessageDto } from '../../../src/shared/api';
import type { ChatSocket, ConnectionStatus } from '../api/use-chat-socket';
import { catchUpAfterSeq } from './thread-state';
import { emitJoin, lastStoredSeq } from './thread-socket';
import type { ThreadStore } from './thread-store';

/** Whether the open thread is joined, as state (for rendering) and as a ref (read at call time). */
export function useJoinedFlag() {
  const [joined, setJoinedState] = useState(false);
  const joinedRef = useRef(false);
  joinedRef.current = joined;
  const setJoined = useCallback((value: boolean) => {
    joinedRef.current = value;
    setJoinedState(value);
  }, []);
  return { joined, joinedRef, setJoined };
}

/**
 * A catch-up cut at the server's cap (messages or bytes): ask again after the last seq received, one bounded ack at a
 * time, until the server says there is no more.
 */
function useCatchUpRest(store: ThreadStore, socket: ChatSocket | null) {
  const { dispatch } = store;
  return useCallback(
    async (id: string, fromSeq: number) => {
      let after = fromSeq;
      while (socket?.connected) {
        let ack: Awaited<ReturnType<typeof emitJoin>>;
        try {
          ack = await emitJoin(socket, id, after);
        } catch {
          return; // No ack in time: the next reconnect catches up again.
        }
        if (!ack.ok) {
          dispatch({ type: 'notice', error: ack.error });
          return;
        }
        dispatch({ type: 'messages-received', messages: ack.messages });
        const last = lastStoredSeq(ack.messages);
        if (!ack.hasMoreAfter || last === undefined || last === null || last <= after) return;
        after = last;
      }
    },
    [socket, dispatch],
  );
}

/**
 * Joins the thread (or re-joins with `afterSeq` catch-up) whenever the socket (re)connects; leaves it on a change.
 * After the join: the tool runs of its messages are fetched, and the outbox is flushed.
 */
export function useThreadJoin(input: {
  store: ThreadStore;
  socket: ChatSocket | null;
  status: ConnectionStatus;
  threadId: string | null;
  setJoined: (joined: boolean) => void;
  fetchToolRuns: (messages: MessageDto[]) => void;
  flushOutbox: () => void;
}) {
  const { store, socket, status, threadId, setJoined, fetchToolRuns, flushOutbox } = input;
  const { stateRef, dispatch, onEventRef } = store;
  const catchUpRest = useCatchUpRest(store, socket);

  useEffect(() => {
    if (!socket || status !== 'connected' || !threadId) return undefined;
    let cancelled = false;
    const afterSeq = stateRef.current?.threadId === threadId ? catchUpAfterSeq(stateRef.current) : undefined;
    emitJoin(socket, threadId, afterSeq).then(
      (ack) => {
        if (cancelled) return;
        if (!ack.ok) {
          dispatch({ type: 'notice', error: ack.error });
          return;
        }
        const { messages, thread } = ack;
        dispatch({
          type: 'joined',
          messages,
          thread,
          ...(afterSeq === undefined ? { hasMoreBefore: ack.hasMoreBefore } : {}),
        });
        fetchToolRuns(messages);
        if (ack.hasMoreAfter) void catchUpRest(threadId, lastStoredSeq(messages) ?? afterSeq ?? 0);
        setJoined(true);
        flushOutbox();
        onEventRef.current?.('message');
      },
      // eslint-disable-next-line no-restricted-syntax -- no ack in time: the next reconnect joins again
      () => {},
    );
    return () => {
      cancelled = true;
      setJoined(false);
      if (socket.connected) socket.emit('thread-leave', { threadId }, () => undefined);
    };
  }, [socket, status, threadId, stateRef, dispatch, onEventRef, setJoined, fetchToolRuns, flushOutbox, catchUpRest]);
}
