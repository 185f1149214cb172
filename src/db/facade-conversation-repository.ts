import { BRANCH_TAIL_CHARS, type FacadeConversationStore } from '../core/ports';
import { storableJson } from './storable-values';
import { createClientHistoryRepository } from './client-history-repository';
import type { Database } from './prisma-client';

/** The OpenAI-compatible route's conversations (table facade_conversations) and the reads it needs. */
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
