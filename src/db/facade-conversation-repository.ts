import type { FacadeConversationStore } from '../core/facade/facade-ports';
import type { Database } from './prisma-client';

/** The OpenAI-compatible route's conversations (table facade_conversations) and the reads it needs. */
export function createFacadeConversationRepository(db: Database): FacadeConversationStore {
  return {
    async threadsOf({ userId, clientKey, limit }) {
      const rows = await db.$queryRaw<{ thread_id: string }[]>`
        SELECT thread_id FROM facade_conversations
        WHERE user_id = ${userId} AND client_key = ${clientKey}
        ORDER BY created_at DESC, id DESC
        LIMIT ${limit}::int`;
      return rows.map((row) => row.thread_id);
    },

    async link({ userId, clientKey, threadId }) {
      await db.$executeRaw`
        INSERT INTO facade_conversations (id, user_id, client_key, thread_id)
        VALUES (gen_random_uuid(), ${userId}, ${clientKey}, ${threadId}::uuid)
        ON CONFLICT (user_id, client_key, thread_id) DO NOTHING`;
    },

    async setClientSettings({ threadId, settings }) {
      // Only a change bumps the version (a fold planned under the old prefix re-plans); the same settings are a no-op.
      const value = JSON.stringify(settings);
      await db.$executeRaw`
        UPDATE threads SET settings = jsonb_set(settings, '{openaiClient}', ${value}::jsonb), version = version + 1, updated_at = now()
        WHERE id = ${threadId}::uuid AND settings->'openaiClient' IS DISTINCT FROM ${value}::jsonb`;
    },

    async usageOfTurn(turnId) {
      // Cached tokens: null when no call of the turn had them reported (sum over nulls), so the answer leaves them out.
      const rows = await db.$queryRaw<{ prompt: number | null; completion: number | null; cached: number | null }[]>`
        SELECT sum(c.reported_prompt_tokens)::int AS prompt, sum(c.reported_completion_tokens)::int AS completion,
          sum(c.reported_cached_tokens)::int AS cached
        FROM messages m JOIN model_calls c ON c.message_id = coalesce(m.origin_message_id, m.id) AND c.purpose = 'chat'
        WHERE m.turn_id = ${turnId}::uuid`;
      return { promptTokens: rows[0]?.prompt ?? 0, completionTokens: rows[0]?.completion ?? 0, cachedTokens: rows[0]?.cached ?? null };
    },
  };
}
