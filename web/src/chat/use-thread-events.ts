import { useEffect } from 'react';
import type { MessageDto } from '../../../src/shared/api';
import type { ServerToClientEvents } from '../../../src/shared/socket-events';
import type { ChatSocket } from '../api/use-chat-socket';
import type { ThreadStore } from './thread-store';

type Handler<Name extends keyof ServerToClientEvents> = ServerToClientEvents[Name];

/** The handlers of the thread's room events; another thread's events are ignored. */
function roomHandlers(threadId: string, store: ThreadStore, fetchToolRuns: (messages: MessageDto[]) => void) {
  const { dispatch, onEventRef } = store;
  const mine = (id: string) => id === threadId;
  const onMessage: Handler<'message-created'> = ({ message }) => {
    if (!mine(message.threadId)) return;
    dispatch({ type: 'messages-received', messages: [message] });
    if (message.toolRunId) fetchToolRuns([message]);
    onEventRef.current?.('message');
  };
  const onDelta: Handler<'message-delta'> = ({ threadId: id, messageId, offset, delta }) => {
    if (mine(id)) dispatch({ type: 'delta-received', messageId, offset, delta });
  };
  const onTurnEnd: Handler<'turn-end'> = (payload) => {
    if (!mine(payload.threadId)) return;
    dispatch({ type: 'turn-ended', turnId: payload.turnId });
    onEventRef.current?.('turn-end');
  };
  const onTurnError: Handler<'turn-error'> = (payload) => {
    if (!mine(payload.threadId)) return;
    // An error tied to a message arrives with that message (status error); the rest is a thread notice.
    if (!payload.messageId) dispatch({ type: 'notice', error: payload.error });
  };
  const onToolRun: Handler<'tool-start'> = (payload) => {
    if (mine(payload.threadId)) dispatch({ type: 'tool-run-updated', run: payload.run });
  };
  const onToolProgress: Handler<'tool-progress'> = ({ threadId: id, runId, progress, note }) => {
    if (mine(id)) dispatch({ type: 'tool-progress', runId, progress, note });
  };
  const onSummary: Handler<'summary-updated'> = (payload) => {
    if (mine(payload.threadId)) onEventRef.current?.('summary-updated');
  };
  const onThreadUpdated: Handler<'thread-updated'> = (payload) => {
    if (!mine(payload.thread.id)) return;
    dispatch({ type: 'thread-updated', thread: payload.thread });
    onEventRef.current?.('thread-updated');
  };
  const onContextReset: Handler<'context-reset'> = (payload) => {
    if (!mine(payload.threadId)) return;
    dispatch({ type: 'context-reset', seq: payload.seq });
    onEventRef.current?.('thread-updated');
  };
  return {
    onMessage,
    onDelta,
    onTurnEnd,
    onTurnError,
    onToolRun,
    onToolProgress,
    onSummary,
    onThreadUpdated,
    onContextReset,
  };
}

/** Listens to the room's events on `socket`; returns the function that stops listening. */
function subscribe(socket: ChatSocket, handlers: ReturnType<typeof roomHandlers>): () => void {
  const { onMessage, onDelta, onTurnEnd, onTurnError, onToolRun, onToolProgress } = handlers;
  const { onSummary, onThreadUpdated, onContextReset } = handlers;
  socket.on('message-created', onMessage);
  socket.on('message-start', onMessage);
  socket.on('message-end', onMessage);
  socket.on('message-updated', onMessage);
  socket.on('message-delta', onDelta);
  socket.on('turn-end', onTurnEnd);
  socket.on('turn-error', onTurnError);
  socket.on('tool-start', onToolRun);
  socket.on('tool-end', onToolRun);
  socket.on('tool-progress', onToolProgress);
  socket.on('summary-updated', onSummary);
  socket.on('thread-updated', onThreadUpdated);
  socket.on('context-reset', onContextReset);
  return () => {
    socket.off('context-reset', onContextReset);
    socket.off('message-created', onMessage);
    socket.off('message-start', onMessage);
    socket.off('message-end', onMessage);
    socket.off('message-updated', onMessage);
    socket.off('message-delta', onDelta);
    socket.off('turn-end', onTurnEnd);
    socket.off('turn-error', onTurnError);
    socket.off('tool-start', onToolRun);
    socket.off('tool-end', onToolRun);
    socket.off('tool-progress', onToolProgress);
    socket.off('summary-updated', onSummary);
    socket.off('thread-updated', onThreadUpdated);
  };
}

/** The room events of the open thread (messages, deltas, turns, tool runs, summary, thread changes) into its state. */
export function useThreadEvents(input: {
  store: ThreadStore;
  socket: ChatSocket | null;
  threadId: string | null;
  fetchToolRuns: (messages: MessageDto[]) => void;
}) {
  const { store, socket, threadId, fetchToolRuns } = input;
  useEffect(() => {
    if (!socket || !threadId) return undefined;
    return subscribe(socket, roomHandlers(threadId, store, fetchToolRuns));
  }, [socket, threadId, store, fetchToolRuns]);
}
