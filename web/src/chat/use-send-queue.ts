import { useCallback, type MutableRefObject } from 'react';
import type { ChatSocket, ConnectionStatus } from '../api/use-chat-socket';
import { newClientId } from './new-client-id';
import { ACK_TIMEOUT_MS } from './thread-socket';
import { applyNow, type ThreadStore } from './thread-store';

interface SendItem {
  threadId: string;
  clientMessageId: string;
  content: string;
}

/** Sends one outgoing message; a lost ack sends it again with the same clientMessageId (the server stores it once). */
function useSendOne(store: ThreadStore, socket: ChatSocket | null) {
  const { dispatch, onEventRef } = store;
  const sendOne = useCallback(
    async (item: SendItem) => {
      const { clientMessageId } = item;
      if (!socket) return;
      dispatch({ type: 'outgoing-updated', clientMessageId, patch: { state: 'sending', error: null } });
      try {
        const ack = await socket
          .timeout(ACK_TIMEOUT_MS)
          .emitWithAck('message-send', { threadId: item.threadId, content: item.content, clientMessageId });
        if (ack.ok) {
          dispatch({ type: 'message-sent', message: ack.message, turnId: ack.turnId });
          onEventRef.current?.('message');
        } else if (ack.error.code === 'UNAVAILABLE') {
          // The server is restarting (nothing was stored): the join after the reconnect sends it again.
          dispatch({ type: 'outgoing-updated', clientMessageId, patch: { state: 'waiting' } });
        } else {
          dispatch({ type: 'outgoing-updated', clientMessageId, patch: { state: 'failed', error: ack.error } });
        }
      } catch {
        // No ack in time: send again with the same clientMessageId (the server stores it once), now if the
        // connection is back, else when the reconnect's join flushes the outbox.
        dispatch({ type: 'outgoing-updated', clientMessageId, patch: { state: 'waiting' } });
        if (socket.connected) void sendOne(item);
      }
    },
    [socket, dispatch, onEventRef],
  );
  return sendOne;
}

/**
 * The outbox: messages typed here are queued, sent once when the thread is joined (or flushed by the next join),
 * resent or discarded by the user after a refusal.
 */
export function useSendQueue(input: {
  store: ThreadStore;
  socket: ChatSocket | null;
  status: ConnectionStatus;
  threadId: string | null;
  joined: boolean;
  /** Read by `send` at call time: the join's ack may land between a render and a send made from its effects. */
  joinedRef: MutableRefObject<boolean>;
}) {
  const { store, socket, status, threadId, joined, joinedRef } = input;
  const { stateRef, dispatch } = store;
  const sendOne = useSendOne(store, socket);

  const flushOutbox = useCallback(() => {
    const current = stateRef.current;
    for (const item of current?.outgoing ?? []) {
      if (item.state === 'waiting')
        void sendOne({ threadId: current!.threadId, clientMessageId: item.clientMessageId, content: item.content });
    }
  }, [stateRef, sendOne]);

  function send(content: string) {
    if (!threadId) return;
    const clientMessageId = newClientId();
    const item = { clientMessageId, content, createdAt: new Date().toISOString() };
    dispatch({ type: 'outgoing-queued', item });
    // Kept in the ref at once: a join whose ack lands before the next render flushes it (a new chat's first
    // message is sent while its thread is being joined).
    if (stateRef.current?.threadId === threadId) applyNow(store, { type: 'outgoing-queued', item });
    // Sent now when joined; otherwise the join (or the one after a reconnect) flushes the outbox.
    if (joinedRef.current && socket?.connected) void sendOne({ threadId, clientMessageId, content });
  }

  function resend(clientMessageId: string) {
    const item = stateRef.current?.outgoing.find((candidate) => candidate.clientMessageId === clientMessageId);
    dispatch({ type: 'outgoing-updated', clientMessageId, patch: { state: 'waiting', error: null } });
    if (item && threadId && joined && status === 'connected')
      void sendOne({ threadId, clientMessageId, content: item.content });
  }

  function discard(clientMessageId: string) {
    dispatch({ type: 'outgoing-discarded', clientMessageId });
  }

  return { flushOutbox, send, resend, discard };
}
