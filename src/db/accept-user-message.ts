import type { AcceptedMessage } from '../core/ports';
import { Prisma } from './generated/client';
import { toMessage, toTurn } from './mappers';
import { messageFromJson } from './sql-columns';

/** What chat_accept_user_message returns: the message and its turn's time, or why not (a missing thread, a full queue). */
export interface AcceptedJson {
  missing?: true;
  queued?: number;
  message?: Record<string, unknown>;
  turnCreatedAt?: string;
}

interface AcceptInput {
  threadId: string;
  ownerId: string | null;
  messageId: string;
  turnId: string;
  content: string;
  tokens: number;
  encoding: string | null;
  clientMessageId: string | null;
  maxQueued: number;
}

/** The statement accepting a user message and queueing its turn (chat_accept_user_message): one row, `accepted`. */
export function acceptUserMessageSql(input: AcceptInput): Prisma.Sql {
  const { threadId, ownerId, messageId, turnId, content, tokens, encoding, clientMessageId, maxQueued } = input;
  return Prisma.sql`
    SELECT chat_accept_user_message(${threadId}::uuid, ${ownerId}::text, ${messageId}::uuid, ${turnId}::uuid, ${content}::text,
      ${tokens}::int, ${encoding}::text, ${clientMessageId}::text, ${maxQueued}::int) AS accepted`;
}

/** The accepted message and its queued turn, as the statement stored them. */
export function toAcceptedMessage(
  accepted: { message: Record<string, unknown>; turnCreatedAt: string },
  ids: { threadId: string; messageId: string; turnId: string },
): AcceptedMessage {
  return {
    message: toMessage(messageFromJson(accepted.message)),
    turn: toTurn({
      id: ids.turnId,
      threadId: ids.threadId,
      kind: 'message',
      userMessageId: ids.messageId,
      status: 'queued',
      error: null,
      createdAt: new Date(accepted.turnCreatedAt),
      startedAt: null,
      finishedAt: null,
    }),
    duplicate: false,
  };
}
