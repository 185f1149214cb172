import type { ChatSocket } from '../api/use-chat-socket';

/** How long a socket ack may take before the call counts as lost. */
export const ACK_TIMEOUT_MS = 15_000;

/** `thread-join` with its ack: the newest page, or (with `afterSeq`) the messages after it, cut at the server's cap. */
export function emitJoin(socket: ChatSocket, threadId: string, afterSeq: number | undefined) {
  return socket
    .timeout(ACK_TIMEOUT_MS)
    .emitWithAck('thread-join', { threadId, ...(afterSeq !== undefined ? { afterSeq } : {}) });
}

/** The last stored seq among `messages` (queued ones have none). */
export function lastStoredSeq(messages: { seq: number | null }[]): number | null | undefined {
  return messages.filter((message) => message.seq !== null).at(-1)?.seq;
}
