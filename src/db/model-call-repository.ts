import type { ModelCallRecord, ModelCallStore } from '../core/ports';
import { Prisma } from './generated/client';
import type { Database } from './prisma-client';
import { ASYNC_COMMIT } from './sql-columns';

/**
 * The user a call row names (model_calls.user_id, what the costs by user and spend limits count): the record's own,
 * else its thread's owner, read in the insert itself.
 */
export function callUser(call: Pick<ModelCallRecord, 'threadId' | 'userId'>): Prisma.Sql {
  return Prisma.sql`coalesce(${call.userId ?? null}::text, (SELECT owner_id FROM threads WHERE id = ${call.threadId}::uuid))`;
}

export function createModelCallRepository(db: Database): ModelCallStore {
  return {
    // On every turn, before `message-end`: one raw insert (no ORM query planning); a call record lost in a
    // Postgres crash is only a missing line of telemetry, so its commit does not wait for the WAL flush.
    async record(call) {
      await db.$executeRaw`
        INSERT INTO model_calls (id, thread_id, user_id, message_id, purpose, model, estimated_prompt_tokens, reported_prompt_tokens,
          reported_completion_tokens, latency_ms, summary_revision, window_from_seq, window_through_seq, pinned_seqs, recalled_seqs, omitted,
          overflow_retry, error, reported_cached_tokens, reported_cache_write_tokens, prompt_divergence, prompt_fingerprints, tools_fingerprint)
        SELECT gen_random_uuid(), ${call.threadId}::uuid, ${callUser(call)}, ${call.messageId}::uuid, ${call.purpose}, ${call.model},
          ${call.estimatedPromptTokens}::int, ${call.reportedPromptTokens}::int, ${call.reportedCompletionTokens}::int,
          ${call.latencyMs}::int, ${call.summaryRevision ?? null}::int, ${call.windowFromSeq ?? null}::int,
          ${call.windowThroughSeq ?? null}::int, ${call.pinnedSeqs ?? []}::int[], ${call.recalledSeqs ?? []}::int[], ${call.omitted ?? 0}::int,
          ${call.overflowRetry ?? false}::boolean, ${call.error ?? null}::text, ${call.reportedCachedTokens ?? null}::int,
          ${call.reportedCacheWriteTokens ?? null}::int,
          ${call.promptDivergence ? JSON.stringify(call.promptDivergence) : null}::jsonb,
          ${call.promptFingerprints?.messages ?? []}::int[], ${call.promptFingerprints?.tools ?? null}::int
        FROM ${ASYNC_COMMIT}`;
    },
  };
}
