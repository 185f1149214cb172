import { randomUUID } from 'node:crypto';
import { BRANCH_TAIL_CHARS, type AppendedMessage, type FacadeConversationStore } from '../core/ports';
import { storableJson } from './storable-values';
import { createClientHistoryRepository } from './client-history-repository';
import type { Message as MessageRow } from './generated/client';
import { toMessage } from './mappers';
import type { Database } from './prisma-client';
import { MESSAGE_COLUMNS } from './sql-columns';

/** An appended message as the insert reads it (jsonb_to_recordset), its seq already handed out. */
function appendedRow(message: AppendedMessage, seq: number) {
  return {
    id: randomUUID(),
    seq,
    role: message.role,
    content: message.content,
    tokens: message.tokens,
    encoding: message.encoding,
    tool_calls: message.role === 'assistant' && message.toolCalls.length > 0 ? message.toolCalls : null,
    tool_call_id: message.role === 'tool' ? message.toolCallId : null,
  };
}

/** The OpenAI-compatible route's conversations (table facade_conversations) and the reads it needs. */
// eslint-disable-next-line max-lines-per-function -- a factory of small methods, one per FacadeConversationStore operation
export function createFacadeConversationRepository(db: Database): FacadeConversationStore {
  return {
    history: createClientHistoryRepository(db),

    async threadsOf({ userId, clientKey, limit }) {
      // The tail of each branch's last text a client saw: one backward step on (thread_id, seq) per branch.
      const rows = await db.$queryRaw<{ thread_id: string; tail: string | null }[]>`
        SELECT c.thread_id, last.tail
        FROM facade_conversations c
        JOIN threads t ON t.id = c.thread_id
        LEFT JOIN LATERAL (
          SELECT right(m.content, ${BRANCH_TAIL_CHARS}::int) AS tail FROM messages m
          WHERE m.thread_id = c.thread_id AND m.seq IS NOT NULL AND m.role IN ('user', 'assistant') AND m.content <> ''
            AND m.status IN ('complete', 'cancelled') AND NOT m.superseded AND m.deleted_at IS NULL AND m.tool_run_id IS NULL
          ORDER BY m.seq DESC LIMIT 1
        ) last ON true
        WHERE c.user_id = ${userId} AND c.client_key = ${clientKey}
        ORDER BY t.last_activity_at DESC, c.created_at DESC, c.id DESC
        LIMIT ${limit}::int`;
      return rows.map((row) => ({ threadId: row.thread_id, lastTextTail: row.tail }));
    },

    async link({ userId, clientKey, threadId }) {
      await db.$executeRaw`
        INSERT INTO facade_conversations (id, user_id, client_key, thread_id)
        VALUES (gen_random_uuid(), ${userId}, ${clientKey}, ${threadId}::uuid)
        ON CONFLICT (user_id, client_key, thread_id) DO NOTHING`;
    },

    async setClientSettings({ threadId, settings }) {
      // Only a change bumps the version (a fold planned under the old prefix re-plans); the same settings are a no-op.
      const value = JSON.stringify(storableJson(settings));
      await db.$executeRaw`
        UPDATE threads SET settings = jsonb_set(settings, '{openaiClient}', ${value}::jsonb), version = version + 1, updated_at = now()
        WHERE id = ${threadId}::uuid AND settings->'openaiClient' IS DISTINCT FROM ${value}::jsonb`;
    },

    async appendMessages({ threadId, ownerId, messages }) {
      return db.$transaction(async (tx) => {
        // The thread row's lock serializes this with sends and turn starts (they take it to hand out seqs).
        const [thread] = await tx.$queryRaw<{ last_seq: number; context_start_seq: number; undo: unknown }[]>`
          SELECT last_seq, context_start_seq, context_reset_undo AS undo FROM threads
          WHERE id = ${threadId}::uuid AND owner_id = ${ownerId} FOR UPDATE`;
        if (!thread) return { refused: 'missing' as const };
        const [active] = await tx.$queryRaw<{ busy: boolean }[]>`
          SELECT EXISTS (SELECT 1 FROM turns WHERE thread_id = ${threadId}::uuid AND status IN ('queued', 'running')) AS busy`;
        if (active?.busy) return { refused: 'busy' as const };
        const rows = messages.map((message, index) => appendedRow(message, thread.last_seq + index + 1));
        const json = JSON.stringify(storableJson(rows));
        const inserted = await tx.$queryRaw<MessageRow[]>`
          WITH input AS (
            SELECT * FROM jsonb_to_recordset(${json}::jsonb) AS x(id uuid, seq int, role text, content text, tokens int,
              encoding text, tool_calls jsonb, tool_call_id text)
          ), entries AS (
            INSERT INTO context_entries (thread_id, seq, message_id, role, content, tokens, encoding, tool_calls, tool_call_id)
            SELECT ${threadId}::uuid, seq, id, role, content, tokens, encoding, tool_calls, tool_call_id FROM input
          )
          INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, tool_calls, tool_call_id, completed_at)
          SELECT id, ${threadId}::uuid, seq, role, content, 'complete', tokens, encoding, tool_calls, tool_call_id, now()
          FROM input ORDER BY seq
          RETURNING ${MESSAGE_COLUMNS}`;
        await tx.$executeRaw`
          UPDATE threads SET last_seq = last_seq + ${rows.length}::int, last_activity_at = now(), updated_at = now()
          WHERE id = ${threadId}::uuid`;
        // A message after a fresh context makes it final (as chat_start_next_turn does for a sent one).
        if (thread.undo !== null) {
          await tx.$executeRaw`DELETE FROM context_entries WHERE thread_id = ${threadId}::uuid AND seq < ${thread.context_start_seq}::int`;
          await tx.$executeRaw`
            UPDATE messages SET pinned = false, updated_at = now()
            WHERE thread_id = ${threadId}::uuid AND pinned AND seq < ${thread.context_start_seq}::int`;
          await tx.$executeRaw`UPDATE threads SET context_reset_undo = NULL WHERE id = ${threadId}::uuid`;
        }
        return { appended: inserted.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0)).map(toMessage) };
      });
    },

    async setConversationMetadata({ threadId, metadata }) {
      // Not the prompt: no version bump (a fold planned meanwhile stays valid).
      const value = JSON.stringify(storableJson(metadata));
      await db.$executeRaw`
        UPDATE threads SET settings = jsonb_set(settings, '{conversationMetadata}', ${value}::jsonb), updated_at = now()
        WHERE id = ${threadId}::uuid`;
    },

    async activeTurns(userId) {
      // Few turns are active deployment-wide: read them by status (turns_status_idx), then keep the user's.
      const rows = await db.$queryRaw<{ count: number }[]>`
        SELECT count(*)::int AS count FROM turns t JOIN threads th ON th.id = t.thread_id
        WHERE t.status IN ('queued', 'running') AND th.owner_id = ${userId}`;
      return rows[0]?.count ?? 0;
    },

    async cancelQueuedTurn(turnId) {
      const marked = await db.$executeRaw`
        UPDATE turns SET cancel_requested = true WHERE id = ${turnId}::uuid AND status = 'queued'`;
      return marked > 0;
    },

    async usageOfTurn(turnId) {
      // Cached tokens: null when no call of the turn had them reported (sum over nulls), so the answer leaves them out.
      const rows = await db.$queryRaw<
        { prompt: number | null; completion: number | null; cached: number | null; written: number | null }[]
      >`
        SELECT sum(c.reported_prompt_tokens)::int AS prompt, sum(c.reported_completion_tokens)::int AS completion,
          sum(c.reported_cached_tokens)::int AS cached, sum(c.reported_cache_write_tokens)::int AS written
        FROM messages m JOIN model_calls c ON c.message_id = coalesce(m.origin_message_id, m.id) AND c.purpose = 'chat'
        WHERE m.turn_id = ${turnId}::uuid`;
      return {
        promptTokens: rows[0]?.prompt ?? 0,
        completionTokens: rows[0]?.completion ?? 0,
        cachedTokens: rows[0]?.cached ?? null,
        cacheWriteTokens: rows[0]?.written ?? null,
      };
    },
  };
}
