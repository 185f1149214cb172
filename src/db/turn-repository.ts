import { randomUUID } from 'node:crypto';
import { AppError } from '../core/errors';
import type { TurnStore } from '../core/ports';
import type { Database } from './prisma-client';
import { isUniqueViolation } from './prisma-client';
import { loadThreadContext, reviveMessageRow } from './load-thread-context';
import { toMessage, toTurn } from './mappers';
import { ASYNC_COMMIT, MESSAGE_COLUMNS, TURN_COLUMNS, jsonParameter, qualified } from './sql-columns';
import type { Message as MessageRow, Turn as TurnRow } from './generated/client';

/**
 * The turn's hot path in raw SQL: each port call is one statement (one round trip, one commit), except the
 * accept, which locks the thread row first so the queue bound holds under concurrent sends (two statements in
 * one batch transaction). Prisma's interactive transactions cost several round trips and ~1.7 ms each here.
 *
 * Durability: a commit that waits for the WAL flush costs 1-3 ms here, so a turn waits for it only where a user
 * would notice a loss: the accepted user message, the finished answer and the turn's end. The lease, the turn's
 * start and the streaming placeholder commit without waiting (ASYNC_COMMIT); a Postgres crash can only lose
 * the latest of them, which leaves the turn queued or interrupted: states the runner and the sweeper recover from.
 */
export function createTurnRepository(db: Database): TurnStore {
  const findByClientMessageId = async (threadId: string, clientMessageId: string) => {
    const rows = await db.$queryRaw<(MessageRow & { turnRow: Record<string, unknown> | null })[]>`
      SELECT ${qualified(MESSAGE_COLUMNS, 'm')},
        (SELECT row_to_json(x) FROM (SELECT ${TURN_COLUMNS} FROM turns WHERE id = m.turn_id) x) AS "turnRow"
      FROM messages m WHERE m.thread_id = ${threadId}::uuid AND m.client_message_id = ${clientMessageId}`;
    const row = rows[0];
    if (!row?.turnId || !row.turnRow) return null;
    const { turnRow, ...message } = row;
    return { message: toMessage(message), turn: toTurn(reviveTurnRow(turnRow)), duplicate: true };
  };

  return {
    async acceptUserMessage({ threadId, content, tokens, encoding, clientMessageId, maxQueued }) {
      if (clientMessageId) {
        const seen = await findByClientMessageId(threadId, clientMessageId);
        if (seen) return seen;
      }
      const messageId = randomUUID();
      const turnId = randomUUID();
      try {
        // Statement 1 takes the thread's row lock; statement 2 then counts with a snapshot taken after the lock,
        // so concurrent sends see each other's turns and the bound is exact.
        const [, rows] = await db.$transaction([
          db.$executeRaw`SELECT 1 FROM threads WHERE id = ${threadId}::uuid FOR UPDATE`,
          db.$queryRaw<(MessageRow & { queuedCount: number; turnCreatedAt: Date | null })[]>`
            WITH queued AS (
              SELECT count(*)::int AS n FROM turns WHERE thread_id = ${threadId}::uuid AND status IN ('queued', 'running')
            ), message AS (
              INSERT INTO messages (id, thread_id, role, content, status, tokens, encoding, client_message_id, turn_id)
              SELECT ${messageId}::uuid, ${threadId}::uuid, 'user', ${content}::text, 'pending', ${tokens}::int, ${encoding}::text,
                ${clientMessageId}::text, ${turnId}::uuid
              FROM queued WHERE n <= ${maxQueued}::int
              RETURNING ${MESSAGE_COLUMNS}
            ), turn AS (
              INSERT INTO turns (id, thread_id, kind, user_message_id)
              SELECT ${turnId}::uuid, ${threadId}::uuid, 'message', id FROM message
              RETURNING created_at
            ), touched AS (
              UPDATE threads SET last_activity_at = now(), updated_at = now() WHERE id = ${threadId}::uuid AND EXISTS (SELECT 1 FROM message)
            )
            SELECT queued.n AS "queuedCount", message.*, turn.created_at AS "turnCreatedAt"
            FROM queued LEFT JOIN message ON true LEFT JOIN turn ON true`,
        ]);
        const row = rows[0];
        if (!row || row.turnCreatedAt === null) {
          const queued = row?.queuedCount ?? 0;
          throw new AppError('BUSY', `This thread already has ${queued - 1} message(s) waiting; try again when the current answer is done.`);
        }
        const { queuedCount: _queued, turnCreatedAt, ...message } = row;
        return {
          message: toMessage(message),
          turn: toTurn({ id: turnId, threadId, kind: 'message', userMessageId: messageId, status: 'queued', error: null, createdAt: turnCreatedAt, startedAt: null, finishedAt: null }),
          duplicate: false,
        };
      } catch (error) {
        if (clientMessageId && isUniqueViolation(error)) {
          const raced = await findByClientMessageId(threadId, clientMessageId);
          if (raced) return raced;
        }
        throw error;
      }
    },

    async queueTurn({ threadId, kind, userMessageId }) {
      return toTurn(await db.turn.create({ data: { threadId, kind, userMessageId } }));
    },

    async findTurn(turnId) {
      const rows = await db.$queryRaw<TurnRow[]>`SELECT ${TURN_COLUMNS} FROM turns WHERE id = ${turnId}::uuid`;
      return rows[0] ? toTurn(rows[0]) : null;
    },

    async acquireLease({ threadId, owner, ttlMs }) {
      const taken = await db.$executeRaw`
        UPDATE threads SET lease_owner = ${owner}, lease_expires_at = now() + ${ttlMs} * interval '1 millisecond'
        FROM ${ASYNC_COMMIT}
        WHERE id = ${threadId}::uuid AND (lease_owner IS NULL OR lease_owner = ${owner} OR lease_expires_at < now())`;
      return taken === 1;
    },

    async releaseLease({ threadId, owner }) {
      await db.$executeRaw`
        UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL FROM ${ASYNC_COMMIT} WHERE id = ${threadId}::uuid AND lease_owner = ${owner}`;
    },

    async startNextTurn({ threadId, owner }) {
      // One statement: under the lease (thread row locked), the oldest queued turn starts; its pending user message
      // takes the next seq and joins the window.
      const rows = await db.$queryRaw<(TurnRow & { placedMessage: Record<string, unknown> | null; userMessage: Record<string, unknown> | null })[]>`
        WITH held AS (
          -- Locks (a write) only when there is a turn to start, so an empty check commits nothing.
          SELECT t.id FROM threads t, ${ASYNC_COMMIT}
          WHERE t.id = ${threadId}::uuid AND t.lease_owner = ${owner}
            AND EXISTS (SELECT 1 FROM turns WHERE thread_id = t.id AND status = 'queued')
          FOR UPDATE OF t
        ), next AS (
          SELECT q.id, q.user_message_id FROM turns q JOIN held ON q.thread_id = held.id
          WHERE q.status = 'queued' ORDER BY q.created_at ASC LIMIT 1
        ), pending AS (
          SELECT m.id FROM messages m JOIN next ON m.id = next.user_message_id WHERE m.seq IS NULL
        ), bumped AS (
          UPDATE threads t SET last_seq = t.last_seq + 1, last_activity_at = now(), updated_at = now()
          FROM pending WHERE t.id = ${threadId}::uuid RETURNING t.last_seq
        ), placed AS (
          UPDATE messages m SET seq = bumped.last_seq, status = 'complete', completed_at = now(), updated_at = now()
          FROM bumped, pending WHERE m.id = pending.id
          RETURNING ${qualified(MESSAGE_COLUMNS, 'm')}
        ), entry AS (
          INSERT INTO context_entries (thread_id, seq, message_id, role, content, tokens, encoding)
          SELECT "threadId", seq, id, 'user', content, tokens, coalesce(encoding, 'o200k_base') FROM placed
        ), started AS (
          UPDATE turns q SET status = 'running', started_at = now() FROM next WHERE q.id = next.id
          RETURNING ${qualified(TURN_COLUMNS, 'q')}
        )
        SELECT started.*,
          (SELECT row_to_json(placed) FROM placed) AS "placedMessage",
          (SELECT row_to_json(x) FROM (SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = (SELECT user_message_id FROM next)) x) AS "userMessage"
        FROM started`;
      const row = rows[0];
      if (!row) return null;
      const { placedMessage, userMessage, ...turn } = row;
      const message = placedMessage ?? userMessage;
      const context = await loadThreadContext(db, threadId);
      if (!context) return null;
      return { turn: toTurn(turn), userMessage: message ? toMessage(reviveMessageRow(message)) : null, context };
    },

    loadContext: (threadId) => loadThreadContext(db, threadId),

    async appendTurnMessage({ threadId, turnId, role, content, status, toolCalls, toolCallId, toolRunId }) {
      // The thread row update hands out the seq and serializes appends per thread.
      const rows = await db.$queryRaw<MessageRow[]>`
        WITH bumped AS (
          UPDATE threads SET last_seq = last_seq + 1, last_activity_at = now(), updated_at = now()
          FROM ${ASYNC_COMMIT} WHERE id = ${threadId}::uuid RETURNING last_seq
        )
        INSERT INTO messages (id, thread_id, seq, role, content, status, turn_id, tool_calls, tool_call_id, tool_run_id)
        SELECT ${randomUUID()}::uuid, ${threadId}::uuid, last_seq, ${role}::text, ${content}::text, ${status}::text, ${turnId}::uuid,
          ${jsonParameter(toolCalls)}::jsonb, ${toolCallId ?? null}::text, ${toolRunId ?? null}::uuid
        FROM bumped
        RETURNING ${MESSAGE_COLUMNS}`;
      if (!rows[0]) throw new AppError('NOT_FOUND', 'No such thread.');
      return toMessage(rows[0]);
    },

    async saveStreamingText(messageId, content) {
      await db.$executeRaw`UPDATE messages SET content = ${content}, updated_at = now() WHERE id = ${messageId}::uuid AND status = 'streaming'`;
    },

    async finishMessage({ messageId, content, status, error, toolCalls, tokens, encoding, entry }) {
      // The message's final state and, when given, its context entry: one statement.
      const rows = await db.$queryRaw<MessageRow[]>`
        WITH finished AS (
          UPDATE messages SET content = ${content}::text, status = ${status}::text, tokens = ${tokens}::int, encoding = ${encoding}::text,
            completed_at = now(), updated_at = now(),
            error = coalesce(${jsonParameter(error)}::jsonb, error), tool_calls = coalesce(${jsonParameter(toolCalls)}::jsonb, tool_calls)
          WHERE id = ${messageId}::uuid
          RETURNING ${MESSAGE_COLUMNS}
        ), entry AS (
          INSERT INTO context_entries (thread_id, seq, message_id, role, content, tokens, encoding, tool_calls, tool_call_id)
          SELECT "threadId", seq, id, ${entry?.role ?? null}::text, ${entry?.content ?? null}::text, ${entry?.tokens ?? null}::int,
            ${encoding}::text, ${jsonParameter(entry?.toolCalls)}::jsonb, ${entry?.toolCallId ?? null}::text
          FROM finished WHERE ${entry !== undefined}::boolean AND seq IS NOT NULL
        )
        SELECT * FROM finished`;
      if (!rows[0]) throw new AppError('NOT_FOUND', 'No such message.');
      return toMessage(rows[0]);
    },

    async finishTurn({ turnId, status, error }) {
      const rows = await db.$queryRaw<TurnRow[]>`
        UPDATE turns SET status = ${status}::text, finished_at = now(), error = coalesce(${jsonParameter(error)}::jsonb, error)
        WHERE id = ${turnId}::uuid RETURNING ${TURN_COLUMNS}`;
      if (!rows[0]) throw new AppError('NOT_FOUND', 'No such turn.');
      return toTurn(rows[0]);
    },

    async hasQueuedTurns(threadId) {
      const rows = await db.$queryRaw<{ queued: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM turns WHERE thread_id = ${threadId}::uuid AND status = 'queued') AS queued`;
      return rows[0]?.queued === true;
    },

    async threadsWithStrandedTurns(limit) {
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT DISTINCT t.id FROM threads t JOIN turns q ON q.thread_id = t.id
        WHERE q.status IN ('queued', 'running') AND (t.lease_owner IS NULL OR t.lease_expires_at < now())
        LIMIT ${limit}`;
      return rows.map((row) => row.id);
    },

    async failInterruptedTurns(threadId) {
      const error = { code: 'INTERNAL', message: 'The server running this answer stopped; the answer was interrupted.' };
      await db.$transaction([
        db.message.updateMany({ where: { threadId, status: 'streaming' }, data: { status: 'error', error, completedAt: new Date() } }),
        db.turn.updateMany({ where: { threadId, status: 'running' }, data: { status: 'error', error, finishedAt: new Date() } }),
      ]);
    },
  };
}

function reviveTurnRow(json: Record<string, unknown>): TurnRow {
  const date = (value: unknown) => (typeof value === 'string' ? new Date(value) : null);
  return { ...(json as unknown as TurnRow), createdAt: date(json.createdAt) ?? new Date(0), startedAt: date(json.startedAt), finishedAt: date(json.finishedAt) };
}
