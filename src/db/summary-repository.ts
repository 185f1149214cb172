import type { SummaryRevisionRecord, SummaryStore } from '../core/ports';
import { Prisma } from './generated/client';
import { toRevisionRecord } from './mappers';
import type { Database } from './prisma-client';

/** A threshold no window reaches (a trigger kind a thread's own policy does not name). */
const NEVER = '9223372036854775807';

export function createSummaryRepository(db: Database): SummaryStore {
  return {
    async commit(commit) {
      // Where the revision's lineage starts (context_start_seq): a forget of any seq from there through throughSeq taints it.
      // One statement: compare-and-set on the thread's version (a concurrent fold or context change wins and this
      // one re-plans), the revision record, and the folded entries leaving the window. Through the driver's pool
      // (db.sql), not Prisma's query runtime; a plain commit, so it waits for the WAL flush like every summary commit.
      const rows = await db.sql.rows<{ revision: number }>(Prisma.sql`
        WITH updated AS (
          UPDATE threads SET summary_text = ${commit.text}, summary_segment_ends = ${commit.segmentEnds}::int[], summary_tokens = ${commit.tokens}::int, summary_encoding = ${commit.encoding},
            summary_covered_through_seq = ${commit.throughSeq}::int, summary_revision = summary_revision + 1, version = version + 1,
            last_fold_at = now(), last_fold_error = NULL, updated_at = now()
          WHERE id = ${commit.threadId}::uuid AND version = ${commit.expectedVersion}::int
          RETURNING summary_revision, context_start_seq
        ), revision AS (
          INSERT INTO summary_revisions (id, thread_id, revision, author, author_id, text, segment_ends, tokens, from_seq, through_seq, context_start_seq, model,
            tokens_in, tokens_out, duration_ms, identifiers_kept, identifiers_total)
          SELECT gen_random_uuid(), ${commit.threadId}::uuid, summary_revision, ${commit.author}, ${commit.authorId ?? null}::text,
            ${commit.text}, ${commit.segmentEnds}::int[], ${commit.tokens}::int, ${commit.fromSeq}::int, ${commit.throughSeq}::int, context_start_seq, ${commit.model}::text,
            ${commit.tokensIn}::int, ${commit.tokensOut}::int, ${commit.durationMs}::int, ${commit.identifiersKept}::int,
            ${commit.identifiersTotal}::int
          FROM updated
        ), folded AS (
          DELETE FROM context_entries
          WHERE thread_id = ${commit.threadId}::uuid AND seq = ANY(${commit.foldedSeqs}::int[]) AND pinned = false
            AND EXISTS (SELECT 1 FROM updated)
        )
        SELECT summary_revision AS revision FROM updated`);
      const row = rows[0];
      return row ? { committed: true as const, revision: row.revision } : { committed: false as const };
    },

    async recordFoldError(threadId, message) {
      await db.thread.updateMany({ where: { id: threadId }, data: { lastFoldError: message } });
    },

    async listRevisions(threadId): Promise<SummaryRevisionRecord[]> {
      const rows = await db.summaryRevision.findMany({ where: { threadId }, orderBy: { revision: 'asc' } });
      return rows.map(toRevisionRecord);
    },

    async threadsNeedingFold({ limit, minWindowTokens, minWindowMessages, maxInputTokens }) {
      // A thread's own trigger (settings.trigger, validated when set: `tokens=N`, `messages=N`, `fraction=F`, each
      // kind at most once) replaces the deployment's, as policiesFor does; a kind it lacks never fires.
      const rows = await db.$queryRaw<{ id: string }[]>`
        WITH windows AS (
          SELECT t.id, t.settings->>'trigger' AS own, SUM(e.tokens) + t.summary_tokens AS tokens, COUNT(*) AS messages
          FROM threads t
          JOIN context_entries e ON e.thread_id = t.id
            AND e.pinned = false AND e.seq >= t.context_start_seq
          WHERE t.memory_mode = 'summary'
            -- a withdrawn summary (after a forget) is rebuilt first; folds wait for it
            AND NOT (t.summary_revision > 0 AND t.summary_text = '' AND t.summary_covered_through_seq >= t.context_start_seq)
          GROUP BY t.id, t.summary_tokens, t.settings
        ), thresholds AS (
          SELECT id, tokens, messages,
            CASE WHEN own IS NULL THEN ${minWindowTokens}::bigint ELSE LEAST(
              coalesce(substring(own from 'tokens *= *([0-9]+)')::bigint, ${NEVER}::bigint),
              coalesce(ceil(substring(own from 'fraction *= *([0-9.]+)')::numeric * ${maxInputTokens}::int)::bigint, ${NEVER}::bigint)
            ) END AS min_tokens,
            CASE WHEN own IS NULL THEN ${minWindowMessages}::bigint
              ELSE coalesce(substring(own from 'messages *= *([0-9]+)')::bigint, ${NEVER}::bigint) END AS min_messages
          FROM windows
        )
        SELECT id FROM thresholds WHERE tokens >= min_tokens OR messages >= min_messages
        LIMIT ${limit}`;
      return rows.map((row) => row.id);
    },
  };
}
