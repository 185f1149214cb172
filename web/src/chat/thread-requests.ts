import type { MutableRefObject } from 'react';
import type {
  ContextResetResponseDto,
  ForgetResponseDto,
  MessageCopyDto,
  MessageDto,
  PinResponseDto,
  SendMessageResponseDto,
} from '../../../src/shared/api';
import type { AckResponse } from '../../../src/shared/socket-events';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import type { ChatSocket } from '../api/use-chat-socket';
import { userMessageBefore } from './thread-state';
import { ACK_TIMEOUT_MS } from './thread-socket';
import type { ThreadStore } from './thread-store';

/** What the thread's requests need: the store, the socket (for cancels), the token of this render, the open thread. */
export interface RequestContext {
  store: ThreadStore;
  socket: ChatSocket | null;
  token: string | null;
  threadId: string | null;
  /** Told which other threads (branches) still hold a copy of what a forget erased here. */
  onForgottenRef: MutableRefObject<((copies: MessageCopyDto[]) => void) | undefined>;
}

function failWith(context: RequestContext) {
  return (error: unknown) => context.store.dispatch({ type: 'notice', error: ApiError.from(error) });
}

/** A cancel over the socket while connected (its refusal becomes the notice), else (or when no ack comes) over REST. */
function cancel(
  context: RequestContext,
  viaSocket: (socket: ReturnType<ChatSocket['timeout']>) => Promise<AckResponse<{ cancelled: boolean }>>,
  restPath: string,
) {
  const { socket, token, store } = context;
  const viaRest = () => requestJson(restPath, { method: 'POST', token }).catch(failWith(context));
  if (socket?.connected) {
    viaSocket(socket.timeout(ACK_TIMEOUT_MS)).then((ack) => {
      if (!ack.ok) store.dispatch({ type: 'notice', error: ack.error });
    }, viaRest);
  } else void viaRest();
}

export function stopTurn(context: RequestContext) {
  const { threadId } = context;
  if (!threadId) return;
  cancel(context, (socket) => socket.emitWithAck('turn-cancel', { threadId }), `/api/threads/${threadId}/cancel`);
}

export function cancelTool(context: RequestContext, runId: string) {
  cancel(context, (socket) => socket.emitWithAck('tool-cancel', { runId }), `/api/tool-runs/${runId}/cancel`);
}

/** Answers a failed answer's user message again; a marker turn keeps the Stop button up meanwhile. */
export function retryAnswer(context: RequestContext, message: MessageDto) {
  const { store, token } = context;
  const current = store.stateRef.current;
  const userMessage = current ? userMessageBefore(current, message) : null;
  if (!current || !userMessage) return;
  const turnId = `retry-${message.id}`;
  store.dispatch({ type: 'turn-started', turnId });
  requestJson<SendMessageResponseDto>(`/api/threads/${current.threadId}/messages/${userMessage.id}/retry`, {
    method: 'POST',
    token,
  }).then(
    (result) => store.dispatch({ type: 'turn-ended', turnId, messages: result.messages }),
    (error: unknown) => store.dispatch({ type: 'turn-ended', turnId, error: ApiError.from(error) }),
  );
}

/** Answers the last user message again. */
export function regenerate(context: RequestContext) {
  const { store, token, threadId } = context;
  if (!threadId) return;
  const turnId = `regenerate-${threadId}`;
  store.dispatch({ type: 'turn-started', turnId });
  requestJson<SendMessageResponseDto & { superseded: MessageDto[] }>(`/api/threads/${threadId}/regenerate`, {
    method: 'POST',
    token,
  }).then(
    (result) => store.dispatch({ type: 'turn-ended', turnId, messages: [...result.superseded, ...result.messages] }),
    (error: unknown) => store.dispatch({ type: 'turn-ended', turnId, error: ApiError.from(error) }),
  );
}

/** Pins or unpins a message (its whole tool exchange); a refusal (the pinned-tokens cap) becomes the notice. */
export function setPinned(context: RequestContext, message: MessageDto, pinned: boolean) {
  const { store, token } = context;
  requestJson<PinResponseDto>(`/api/threads/${message.threadId}/messages/${message.id}/pin`, {
    method: pinned ? 'POST' : 'DELETE',
    token,
  }).then((result) => {
    store.dispatch({ type: 'messages-received', messages: result.messages });
    store.onEventRef.current?.('message');
  }, failWith(context));
}

/** Forgets a message, by default with its answer (`only`: just this one). */
export function forget(context: RequestContext, message: MessageDto, options: { only?: boolean } = {}) {
  const { store, token } = context;
  requestJson<ForgetResponseDto>(
    `/api/threads/${message.threadId}/messages/${message.id}${options.only ? '?only=true' : ''}`,
    { method: 'DELETE', token },
  ).then((result) => {
    store.dispatch({ type: 'thread-updated', thread: result.thread, messages: result.messages });
    store.onEventRef.current?.('thread-updated');
    context.onForgottenRef.current?.(result.copies);
  }, failWith(context));
}

/** "Start a new context here", or its undo. */
export function resetContext(context: RequestContext, undo = false) {
  const { store, token, threadId } = context;
  if (!threadId) return;
  requestJson<ContextResetResponseDto>(`/api/threads/${threadId}/context-reset`, {
    method: undo ? 'DELETE' : 'POST',
    token,
  }).then((result) => {
    store.dispatch({ type: 'thread-updated', thread: result.thread });
    store.onEventRef.current?.('thread-updated');
  }, failWith(context));
}
