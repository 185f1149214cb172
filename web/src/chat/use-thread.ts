import { useCallback, useEffect, useRef, useState } from 'react';
import type {
  ContextResetResponseDto,
  ForgetResponseDto,
  MessageCopyDto,
  MessageDto,
  MessagePageDto,
  PinResponseDto,
  SendMessageResponseDto,
  ThreadDto,
  ToolRunDto,
} from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import type { ChatSocket, ConnectionStatus } from '../api/use-chat-socket';
import { newClientId } from './new-client-id';
import {
  applyDelta,
  catchUpAfterSeq,
  contextReset,
  emptyThreadState,
  lowestSeq,
  mergeMessages,
  queueOutgoing,
  removeOutgoing,
  setThread,
  toolProgress,
  turnEnded,
  turnStarted,
  updateOutgoing,
  upsertToolRun,
  userMessageBefore,
  type ThreadState,
} from './thread-state';

const ACK_TIMEOUT_MS = 15_000;
const PAGE_SIZE = 30;
/** The server's largest page, used to reach a cited or searched message far up in one or a few requests. */
const MAX_PAGE_SIZE = 200;
/** Messages loaded above a message jumped to, so it is read in its context. */
const CONTEXT_ABOVE = 10;

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

/** `thread-join` with its ack: the newest page, or (with `afterSeq`) the messages after it, cut at the server's cap. */
function emitJoin(socket: ChatSocket, threadId: string, afterSeq: number | undefined) {
  return socket
    .timeout(ACK_TIMEOUT_MS)
    .emitWithAck('thread-join', { threadId, ...(afterSeq !== undefined ? { afterSeq } : {}) });
}

/** Called with every thread event (e.g. to refresh the memory panel or the thread list). */
export type ThreadEventListener = (event: 'message' | 'summary-updated' | 'turn-end' | 'thread-updated') => void;

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
  const [state, setState] = useState<ThreadState | null>(null);
  const [joined, setJoined] = useState(false);
  // Read by `send` at call time: the join's ack may land between a render and a send made from its effects.
  const joinedRef = useRef(false);
  joinedRef.current = joined;
  const stateRef = useRef<ThreadState | null>(null);
  stateRef.current = state;
  const onEventRef = useRef(input.onEvent);
  onEventRef.current = input.onEvent;
  // Told which other threads (branches) still hold a copy of what a forget erased here.
  const onForgottenRef = useRef(input.onForgotten);
  onForgottenRef.current = input.onForgotten;
  // Read at call time: a refreshed token must not re-run the join effect (a leave and a join per refresh).
  const tokenRef = useRef(token);
  tokenRef.current = token;

  const update = useCallback((change: (current: ThreadState) => ThreadState) => {
    setState((current) => (current ? change(current) : current));
  }, []);

  // A new thread starts empty; the join below fills it.
  useEffect(() => {
    setState(threadId ? emptyThreadState(threadId) : null);
    joinedRef.current = false;
    setJoined(false);
  }, [threadId]);

  const fetchToolRuns = useCallback(
    (messages: MessageDto[]) => {
      const known = stateRef.current?.toolRuns ?? {};
      const ids = [
        ...new Set(
          messages.map((message) => message.toolRunId).filter((id): id is string => Boolean(id) && !known[id!]),
        ),
      ];
      for (const id of ids) {
        requestJson<ToolRunDto>(`/api/tool-runs/${id}`, { token: tokenRef.current }).then(
          (run) => update((current) => upsertToolRun(current, run)),
          (error: unknown) => update((current) => ({ ...current, notice: ApiError.from(error) })),
        );
      }
    },
    [update],
  );

  const sendOne = useCallback(
    async (item: { threadId: string; clientMessageId: string; content: string }) => {
      const { clientMessageId } = item;
      if (!socket) return;
      update((state) => updateOutgoing(state, clientMessageId, { state: 'sending', error: null }));
      try {
        const ack = await socket
          .timeout(ACK_TIMEOUT_MS)
          .emitWithAck('message-send', { threadId: item.threadId, content: item.content, clientMessageId });
        if (ack.ok) {
          update((state) => turnStarted(mergeMessages(state, [ack.message]), ack.turnId));
          onEventRef.current?.('message');
        } else if (ack.error.code === 'UNAVAILABLE') {
          // The server is restarting (nothing was stored): the join after the reconnect sends it again.
          update((state) => updateOutgoing(state, clientMessageId, { state: 'waiting' }));
        } else {
          update((state) => updateOutgoing(state, clientMessageId, { state: 'failed', error: ack.error }));
        }
      } catch {
        // No ack in time: send again with the same clientMessageId (the server stores it once), now if the
        // connection is back, else when the reconnect's join flushes the outbox.
        update((state) => updateOutgoing(state, clientMessageId, { state: 'waiting' }));
        if (socket.connected) void sendOne(item);
      }
    },
    [socket, update],
  );

  const flushOutbox = useCallback(() => {
    const current = stateRef.current;
    for (const item of current?.outgoing ?? []) {
      if (item.state === 'waiting')
        void sendOne({ threadId: current!.threadId, clientMessageId: item.clientMessageId, content: item.content });
    }
  }, [sendOne]);

  /**
   * A catch-up cut at the server's cap (messages or bytes): ask again after the last seq received, one bounded ack at a
   * time, until the server says there is no more.
   */
  const catchUpRest = useCallback(
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
          update((current) => ({ ...current, notice: ack.error }));
          return;
        }
        update((current) => mergeMessages(current, ack.messages));
        const last = ack.messages.filter((message: MessageDto) => message.seq !== null).at(-1)?.seq;
        if (!ack.hasMoreAfter || last === undefined || last === null || last <= after) return;
        after = last;
      }
    },
    [socket, update],
  );

  // Join (or re-join with catch-up) whenever the socket (re)connects.
  useEffect(() => {
    if (!socket || status !== 'connected' || !threadId) return undefined;
    let cancelled = false;
    const afterSeq = stateRef.current?.threadId === threadId ? catchUpAfterSeq(stateRef.current) : undefined;
    emitJoin(socket, threadId, afterSeq).then(
      (ack) => {
        if (cancelled) return;
        if (!ack.ok) {
          update((current) => ({ ...current, notice: ack.error }));
          return;
        }
        update((current) => {
          const merged = setThread(mergeMessages(current, ack.messages), ack.thread);
          return afterSeq === undefined ? { ...merged, hasMoreBefore: ack.hasMoreBefore } : merged;
        });
        fetchToolRuns(ack.messages);
        if (ack.hasMoreAfter)
          void catchUpRest(
            threadId,
            ack.messages.filter((message: MessageDto) => message.seq !== null).at(-1)?.seq ?? afterSeq ?? 0,
          );
        joinedRef.current = true;
        setJoined(true);
        flushOutbox();
        onEventRef.current?.('message');
      },
      // eslint-disable-next-line no-restricted-syntax -- no ack in time: the next reconnect joins again
      () => {},
    );
    return () => {
      cancelled = true;
      joinedRef.current = false;
      setJoined(false);
      if (socket.connected) socket.emit('thread-leave', { threadId }, () => undefined);
    };
  }, [socket, status, threadId, update, fetchToolRuns, flushOutbox, catchUpRest]);

  // Room events of this thread.
  useEffect(() => {
    if (!socket || !threadId) return undefined;
    const mine = (id: string) => id === threadId;
    const onMessage = ({ message }: { message: MessageDto }) => {
      if (!mine(message.threadId)) return;
      update((current) => mergeMessages(current, [message]));
      if (message.toolRunId) fetchToolRuns([message]);
      onEventRef.current?.('message');
    };
    const onDelta = (payload: { threadId: string; messageId: string; offset: number; delta: string }) => {
      if (mine(payload.threadId)) update((current) => applyDelta(current, payload));
    };
    const onTurnEnd = (payload: { threadId: string; turnId: string }) => {
      if (!mine(payload.threadId)) return;
      update((current) => turnEnded(current, payload.turnId));
      onEventRef.current?.('turn-end');
    };
    const onTurnError = (payload: {
      threadId: string;
      turnId?: string;
      messageId?: string;
      error: { code: string; message: string };
    }) => {
      if (!mine(payload.threadId)) return;
      // An error tied to a message arrives with that message (status error); the rest is a thread notice.
      if (!payload.messageId) update((current) => ({ ...current, notice: payload.error as ThreadState['notice'] }));
    };
    const onToolRun = (payload: { threadId: string; run: ToolRunDto }) => {
      if (mine(payload.threadId)) update((current) => upsertToolRun(current, payload.run));
    };
    const onToolProgress = (payload: { threadId: string; runId: string; progress: number; note?: string }) => {
      if (mine(payload.threadId)) update((current) => toolProgress(current, payload));
    };
    const onSummary = (payload: { threadId: string }) => {
      if (mine(payload.threadId)) onEventRef.current?.('summary-updated');
    };
    const onThreadUpdated = (payload: { thread: ThreadDto }) => {
      if (!mine(payload.thread.id)) return;
      update((current) => setThread(current, payload.thread));
      onEventRef.current?.('thread-updated');
    };
    const onContextReset = (payload: { threadId: string; seq: number }) => {
      if (!mine(payload.threadId)) return;
      update((current) => contextReset(current, payload.seq));
      onEventRef.current?.('thread-updated');
    };
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
  }, [socket, threadId, update, fetchToolRuns]);

  const fail = useCallback(
    (error: unknown) => update((current) => ({ ...current, notice: ApiError.from(error) })),
    [update],
  );

  const loadPage = useCallback(
    async (limit = PAGE_SIZE): Promise<boolean> => {
      const current = stateRef.current;
      const before = current ? lowestSeq(current) : null;
      if (!current || before === null || !current.hasMoreBefore) return false;
      const page = await requestJson<MessagePageDto>(
        `/api/threads/${current.threadId}/messages?before=${before}&limit=${limit}`,
        { token },
      );
      const next = { ...mergeMessages(current, page.messages), hasMoreBefore: page.hasMoreBefore };
      // Kept in the ref at once: a caller paging in a loop reads the new lowest seq before React renders.
      stateRef.current = next;
      update((state) => ({ ...mergeMessages(state, page.messages), hasMoreBefore: page.hasMoreBefore }));
      fetchToolRuns(page.messages);
      return page.messages.length > 0;
    },
    [token, update, fetchToolRuns],
  );

  const actions: ThreadActions = {
    send(content) {
      if (!threadId) return;
      const clientMessageId = newClientId();
      const item = { clientMessageId, content, createdAt: new Date().toISOString() };
      update((current) => queueOutgoing(current, item));
      // Kept in the ref at once: a join whose ack lands before the next render flushes it (a new chat's first
      // message is sent while its thread is being joined).
      if (stateRef.current?.threadId === threadId) stateRef.current = queueOutgoing(stateRef.current, item);
      // Sent now when joined; otherwise the join (or the one after a reconnect) flushes the outbox.
      if (joinedRef.current && socket?.connected) void sendOne({ threadId, clientMessageId, content });
    },
    stop() {
      if (!threadId) return;
      const viaRest = () =>
        requestJson(`/api/threads/${threadId}/cancel`, { method: 'POST', token }).catch((error: unknown) =>
          update((current) => ({ ...current, notice: ApiError.from(error) })),
        );
      if (socket?.connected) {
        socket
          .timeout(ACK_TIMEOUT_MS)
          .emitWithAck('turn-cancel', { threadId })
          .then((ack) => {
            if (!ack.ok) update((current) => ({ ...current, notice: ack.error }));
          }, viaRest);
      } else void viaRest();
    },
    async loadOlder() {
      try {
        await loadPage();
      } catch (error) {
        fail(error);
      }
    },
    async loadThrough(seq) {
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
    },
    retryAnswer(message) {
      const current = stateRef.current;
      const userMessage = current ? userMessageBefore(current, message) : null;
      if (!current || !userMessage) return;
      update((state) => ({ ...state, runningTurns: [...state.runningTurns, `retry-${message.id}`] }));
      requestJson<SendMessageResponseDto>(`/api/threads/${current.threadId}/messages/${userMessage.id}/retry`, {
        method: 'POST',
        token,
      }).then(
        (result) => update((state) => turnEnded(mergeMessages(state, result.messages), `retry-${message.id}`)),
        (error: unknown) =>
          update((state) => ({ ...turnEnded(state, `retry-${message.id}`), notice: ApiError.from(error) })),
      );
    },
    resend(clientMessageId) {
      const item = stateRef.current?.outgoing.find((candidate) => candidate.clientMessageId === clientMessageId);
      update((current) => updateOutgoing(current, clientMessageId, { state: 'waiting', error: null }));
      if (item && threadId && joined && status === 'connected')
        void sendOne({ threadId, clientMessageId, content: item.content });
    },
    discard(clientMessageId) {
      update((current) => removeOutgoing(current, clientMessageId));
    },
    cancelTool(runId) {
      const viaRest = () =>
        requestJson(`/api/tool-runs/${runId}/cancel`, { method: 'POST', token }).catch((error: unknown) =>
          update((current) => ({ ...current, notice: ApiError.from(error) })),
        );
      if (socket?.connected) {
        socket
          .timeout(ACK_TIMEOUT_MS)
          .emitWithAck('tool-cancel', { runId })
          .then((ack) => {
            if (!ack.ok) update((current) => ({ ...current, notice: ack.error }));
          }, viaRest);
      } else void viaRest();
    },
    dismissNotice() {
      update((current) => ({ ...current, notice: null }));
    },
    setPinned(message, pinned) {
      requestJson<PinResponseDto>(`/api/threads/${message.threadId}/messages/${message.id}/pin`, {
        method: pinned ? 'POST' : 'DELETE',
        token,
      }).then((result) => {
        update((current) => mergeMessages(current, result.messages));
        onEventRef.current?.('message');
      }, fail);
    },
    forget(message, options = {}) {
      requestJson<ForgetResponseDto>(
        `/api/threads/${message.threadId}/messages/${message.id}${options.only ? '?only=true' : ''}`,
        { method: 'DELETE', token },
      ).then((result) => {
        update((current) => setThread(mergeMessages(current, result.messages), result.thread));
        onEventRef.current?.('thread-updated');
        onForgottenRef.current?.(result.copies);
      }, fail);
    },
    regenerate() {
      if (!threadId) return;
      const marker = `regenerate-${threadId}`;
      update((state) => turnStarted(state, marker));
      requestJson<SendMessageResponseDto & { superseded: MessageDto[] }>(`/api/threads/${threadId}/regenerate`, {
        method: 'POST',
        token,
      }).then(
        (result) =>
          update((state) => turnEnded(mergeMessages(state, [...result.superseded, ...result.messages]), marker)),
        (error: unknown) => update((state) => ({ ...turnEnded(state, marker), notice: ApiError.from(error) })),
      );
    },
    resetContext(undo = false) {
      if (!threadId) return;
      requestJson<ContextResetResponseDto>(`/api/threads/${threadId}/context-reset`, {
        method: undo ? 'DELETE' : 'POST',
        token,
      }).then((result) => {
        update((current) => setThread(current, result.thread));
        onEventRef.current?.('thread-updated');
      }, fail);
    },
  };

  return { state, joined, actions };
}
