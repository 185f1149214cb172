import type { ErrorBody } from './errors';
import type { MessageDto, ThreadDto, ToolRunDto } from './api';

/**
 * The socket.io protocol, defined once and imported by the server and the browser.
 * Every client event is acknowledged with `{ ok: true, ... }` or `{ ok: false, error: { code, message } }`.
 * Documented in docs/realtime.md.
 */

export type AckResponse<T extends object> = ({ ok: true } & T) | { ok: false; error: ErrorBody };
export type Ack<T extends object> = (response: AckResponse<T>) => void;

export interface ThreadJoinPayload {
  threadId: string;
  /** Catch-up: every message after this seq (and messages still queued). Without it: the newest page. */
  afterSeq?: number;
}

export interface ThreadJoinResult {
  thread: ThreadDto;
  /** Ascending seq; a message still streaming comes with its text so far. */
  messages: MessageDto[];
  hasMoreBefore: boolean;
  /**
   * With afterSeq only: true when the catch-up was cut at its cap (2,000 messages or about 1 MB of text); join again
   * with `afterSeq` = the last seq of these messages for the rest.
   */
  hasMoreAfter?: boolean;
}

export interface MessageSendPayload {
  threadId: string;
  content: string;
  /** Idempotency key: a resend after a lost ack gets the same message, not a second turn. */
  clientMessageId: string;
}

export interface MessageEditPayload {
  threadId: string;
  /** The user message to edit: the thread is forked just before it and the new text sent in the fork. */
  messageId: string;
  content: string;
  /** Idempotency key, as for message-send: a resend gets the first edit's fork and message. */
  clientMessageId: string;
}

export interface ClientToServerEvents {
  'thread-join': (payload: ThreadJoinPayload, ack: Ack<ThreadJoinResult>) => void;
  'thread-leave': (payload: { threadId: string }, ack: Ack<Record<string, never>>) => void;
  'message-send': (
    payload: MessageSendPayload,
    ack: Ack<{ message: MessageDto; turnId: string; duplicate: boolean }>,
  ) => void;
  /** Acked like message-send, with the fork (`thread`) that holds the edited message; its answer streams to the fork's room. */
  'message-edit': (
    payload: MessageEditPayload,
    ack: Ack<{ thread: ThreadDto; message: MessageDto; turnId: string; duplicate: boolean }>,
  ) => void;
  'turn-cancel': (payload: { threadId: string }, ack: Ack<{ cancelled: boolean }>) => void;
  'tool-cancel': (payload: { runId: string }, ack: Ack<{ cancelled: boolean }>) => void;
}

/** Every client event, by name: what the server registers a handler for (docs/security.md lists each with its bounds). */
export const CLIENT_EVENT_NAMES = [
  'thread-join',
  'thread-leave',
  'message-send',
  'message-edit',
  'turn-cancel',
  'tool-cancel',
] as const satisfies ReadonlyArray<keyof ClientToServerEvents>;
// A compile error here names a client event missing from CLIENT_EVENT_NAMES.
const everyClientEventListed: Record<
  Exclude<keyof ClientToServerEvents, (typeof CLIENT_EVENT_NAMES)[number]>,
  never
> = {};
void everyClientEventListed;

/** Sent to the thread's room; every payload carries `threadId`. */
export interface ServerToClientEvents {
  'message-created': (payload: { threadId: string; message: MessageDto }) => void;
  'message-start': (payload: { threadId: string; message: MessageDto }) => void;
  /** `offset` is where `delta` starts in the message's text: drop a delta whose offset you already have. */
  'message-delta': (payload: { threadId: string; messageId: string; offset: number; delta: string }) => void;
  'message-end': (payload: { threadId: string; message: MessageDto }) => void;
  'message-updated': (payload: { threadId: string; message: MessageDto }) => void;
  'turn-end': (payload: { threadId: string; turnId: string; status: 'complete' | 'error' | 'cancelled' }) => void;
  'turn-error': (payload: { threadId: string; turnId?: string; messageId?: string; error: ErrorBody }) => void;
  'tool-start': (payload: { threadId: string; run: ToolRunDto }) => void;
  'tool-progress': (payload: { threadId: string; runId: string; progress: number; note?: string }) => void;
  'tool-end': (payload: { threadId: string; run: ToolRunDto }) => void;
  'summary-updated': (payload: {
    threadId: string;
    revision: number;
    coveredThroughSeq: number;
    tokens: number;
  }) => void;
  'thread-updated': (payload: { threadId: string; thread: ThreadDto }) => void;
  'context-reset': (payload: { threadId: string; seq: number }) => void;
  /**
   * Sent to this socket alone when its token expires, right before the server disconnects it
   * (`error.code: 'UNAUTHORIZED'`): refresh the token (POST /api/auth/refresh) and connect again.
   */
  'session-expired': (payload: SessionExpiredPayload) => void;
}

export interface SessionExpiredPayload {
  error: ErrorBody;
  /** ISO time the token expired. */
  expiredAt: string;
}

export interface SocketData {
  userId: string;
  role: 'user' | 'admin';
  /** When the connection's token expires (ms since the epoch): the socket is disconnected then. */
  expiresAt: number;
}

/** `connect_error` data when a connection is refused. */
export interface ConnectErrorData {
  code: 'UNAUTHORIZED' | 'RATE_LIMITED' | 'UNAVAILABLE';
  message: string;
}
