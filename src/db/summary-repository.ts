import type { SummaryRevisionRecord, SummaryStore } from '../core/ports';
import { toRevisionRecord } from './mappers';
import type { Database } from './prisma-client';

export function createSummaryRepository(db: Database): SummaryStore {
  return {
    async commit(commit) {
      return db.$transaction(async (tx) => {
        // Compare-and-set on the thread's version: a concurrent fold or context change wins, we re-plan.
        const updated = await tx.thread.updateMany({
          where: { id: commit.threadId, version: commit.expectedVersion },
          data: {
            summaryText: commit.text,
            summaryTokens: commit.tokens,
            summaryEncoding: commit.encoding,
            summaryCoveredThroughSeq: commit.throughSeq,
            summaryRevision: { increment: 1 },
            version: { increment: 1 },
            lastFoldAt: new Date(),
            lastFoldError: null,
          },
        });
        if (updated.count === 0) return { committed: false as const };
        const thread = await tx.thread.findUniqueOrThrow({ where: { id: commit.threadId }, select: { summaryRevision: true, contextStartSeq: true } });
        await tx.summaryRevision.create({
          data: {
            threadId: commit.threadId,
            revision: thread.summaryRevision,
            author: commit.author,
            authorId: commit.authorId ?? null,
            text: commit.text,
            tokens: commit.tokens,
            fromSeq: commit.fromSeq,
            throughSeq: commit.throughSeq,
            // Where the revision's lineage starts: a forget of any seq from there through throughSeq taints it.
            contextStartSeq: thread.contextStartSeq,
            model: commit.model,
            tokensIn: commit.tokensIn,
            tokensOut: commit.tokensOut,
            durationMs: commit.durationMs,
            identifiersKept: commit.identifiersKept,
            identifiersTotal: commit.identifiersTotal,
          },
        });
        if (commit.foldedSeqs.length > 0) {
          await tx.contextEntry.deleteMany({ where: { threadId: commit.threadId, seq: { in: commit.foldedSeqs }, pinned: false } });
        }
        return { committed: true as const, revision: thread.summaryRevision };
      });
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
