import type { SummaryRevisionRecord, SummaryStore } from '../core/ports';
import { toRevisionRecord } from './mappers';
import type { Database } from './prisma-client';

export function createSummaryRepository(db: Database): SummaryStore {
  return {
    async commit(commit) {
      // Where the revision's lineage starts (context_start_seq): a forget of any seq from there through throughSeq taints it.
      // One statement: compare-and-set on the thread's version (a concurrent fold or context change wins and this
      // one re-plans), the revision record, and the folded entries leaving the window.
      const rows = await db.$queryRaw<{ revision: number }[]>`
        WITH updated AS (
          UPDATE threads SET summary_text = ${commit.text}, summary_tokens = ${commit.tokens}::int, summary_encoding = ${commit.encoding},
            summary_covered_through_seq = ${commit.throughSeq}::int, summary_revision = summary_revision + 1, version = version + 1,
            last_fold_at = now(), last_fold_error = NULL, updated_at = now()
          WHERE id = ${commit.threadId}::uuid AND version = ${commit.expectedVersion}::int
          RETURNING summary_revision, context_start_seq
        ), revision AS (
          INSERT INTO summary_revisions (id, thread_id, revision, author, author_id, text, tokens, from_seq, through_seq, context_start_seq, model,
            tokens_in, tokens_out, duration_ms, identifiers_kept, identifiers_total)
          SELECT gen_random_uuid(), ${commit.threadId}::uuid, summary_revision, ${commit.author}, ${commit.authorId ?? null}::text,
            ${commit.text}, ${commit.tokens}::int, ${commit.fromSeq}::int, ${commit.throughSeq}::int, context_start_seq, ${commit.model}::text,
            ${commit.tokensIn}::int, ${commit.tokensOut}::int, ${commit.durationMs}::int, ${commit.identifiersKept}::int,
            ${commit.identifiersTotal}::int
          FROM updated
        ), folded AS (
          DELETE FROM context_entries
          WHERE thread_id = ${commit.threadId}::uuid AND seq = ANY(${commit.foldedSeqs}::int[]) AND pinned = false
            AND EXISTS (SELECT 1 FROM updated)
        )
        SELECT summary_revision AS revision FROM updated`;
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

    async threadsNeedingFold({ limit, minWindowTokens, minWindowMessages }) {
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT t.id FROM threads t
        JOIN context_entries e ON e.thread_id = t.id
          AND e.pinned = false AND e.seq >= t.context_start_seq
        WHERE t.memory_mode = 'summary'
          -- a withdrawn summary (after a forget) is rebuilt first; folds wait for it
          AND NOT (t.summary_revision > 0 AND t.summary_text = '' AND t.summary_covered_through_seq >= t.context_start_seq)
        GROUP BY t.id, t.summary_tokens
        HAVING SUM(e.tokens) + t.summary_tokens >= ${minWindowTokens} OR COUNT(*) >= ${minWindowMessages}
        LIMIT ${limit}`;
      return rows.map((row) => row.id);
    },
  };
}
