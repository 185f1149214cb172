import type { SummaryStore } from '../../src/core/ports';
import { copy, type MemoryDatabase, type ThreadRow } from './memory-database';

/** The threshold of one trigger kind in a thread's own trigger (`tokens=N,messages=N,fraction=F`); none: never. */
function ownThreshold(trigger: string, kind: 'tokens' | 'messages' | 'fraction'): number | null {
  const match = new RegExp(`${kind} *= *([0-9.]+)`).exec(trigger);
  return match?.[1] ? Number(match[1]) : null;
}

/** A withdrawn summary (after a forget) is rebuilt first; folds wait for it. */
const withdrawn = (thread: ThreadRow) =>
  thread.summary !== null &&
  thread.summary.revision > 0 &&
  thread.summary.text === '' &&
  thread.summary.coveredThroughSeq >= thread.contextStartSeq;

/** SummaryStore in memory (test/contracts/summary-store.contract.ts holds it to the Postgres repository's behaviour). */
export function createMemorySummaryStore(database: MemoryDatabase): SummaryStore {
  return {
    async commit(commit) {
      // Compare-and-set on the thread's version: a concurrent fold or context change wins and this one re-plans.
      const thread = database.threads.get(commit.threadId);
      if (!thread || thread.version !== commit.expectedVersion) return { committed: false };
      const revision = (thread.summary?.revision ?? 0) + 1;
      const now = new Date();
      Object.assign(thread, {
        summary: {
          text: commit.text,
          tokens: commit.tokens,
          coveredThroughSeq: commit.throughSeq,
          revision,
          segmentEnds: commit.segmentEnds,
        },
        summaryEncoding: commit.encoding,
        version: thread.version + 1,
        lastFoldAt: now,
        lastFoldError: null,
        updatedAt: now,
      });
      database.revisions.push({
        threadId: commit.threadId,
        revision,
        author: commit.author,
        authorId: commit.authorId ?? null,
        text: commit.text,
        segmentEnds: commit.segmentEnds,
        tokens: commit.tokens,
        fromSeq: commit.fromSeq,
        throughSeq: commit.throughSeq,
        model: commit.model,
        tokensIn: commit.tokensIn,
        tokensOut: commit.tokensOut,
        durationMs: commit.durationMs,
        identifiersKept: commit.identifiersKept,
        identifiersTotal: commit.identifiersTotal,
        redacted: false,
        createdAt: now,
        contextStartSeq: thread.contextStartSeq,
      });
      const folded = new Set(commit.foldedSeqs);
      database.entries = database.entries.filter(
        (entry) => entry.threadId !== commit.threadId || entry.pinned || !folded.has(entry.seq),
      );
      return { committed: true, revision };
    },

    async recordFoldError(threadId, message) {
      const thread = database.threads.get(threadId);
      if (thread) thread.lastFoldError = message;
    },

    async listRevisions(threadId) {
      return database.revisions
        .filter((revision) => revision.threadId === threadId)
        .sort((a, b) => a.revision - b.revision)
        .map(({ threadId: _threadId, contextStartSeq: _contextStartSeq, ...revision }) => copy(revision));
    },

    async threadsNeedingFold({ limit, minWindowTokens, minWindowMessages, maxInputTokens }) {
      const due: string[] = [];
      for (const thread of database.threads.values()) {
        if (thread.memoryMode !== 'summary' || withdrawn(thread)) continue;
        const window = database.entries.filter(
          (entry) => entry.threadId === thread.id && !entry.pinned && entry.seq >= thread.contextStartSeq,
        );
        if (window.length === 0) continue;
        const tokens = window.reduce((sum, entry) => sum + entry.tokens, 0) + (thread.summary?.tokens ?? 0);
        // A thread's own trigger replaces the deployment's; a kind it lacks never fires.
        const own = thread.settings.trigger;
        const ownTokens =
          own === undefined
            ? null
            : [ownThreshold(own, 'tokens'), ownThreshold(own, 'fraction')].flatMap((value, index) =>
                value === null ? [] : [index === 0 ? value : Math.ceil(value * maxInputTokens)],
              );
        const minTokens = own === undefined ? minWindowTokens : Math.min(Infinity, ...(ownTokens ?? []));
        const minMessages = own === undefined ? minWindowMessages : (ownThreshold(own, 'messages') ?? Infinity);
        if (tokens >= minTokens || window.length >= minMessages) due.push(thread.id);
      }
      return due.slice(0, limit);
    },
  };
}
