import { describe, expect, it } from 'vitest';
import type { SummaryCommit } from '../../src/core/ports';
import { ENCODING, exchange, newThread, type MakeStores } from './store-fixtures';

const commitOf = (threadId: string, expectedVersion: number, fields: Partial<SummaryCommit> = {}): SummaryCommit => ({
  threadId,
  expectedVersion,
  author: 'fold',
  text: 'The user asked two questions.',
  segmentEnds: [29],
  tokens: 7,
  encoding: ENCODING,
  fromSeq: 1,
  throughSeq: 2,
  foldedSeqs: [1, 2],
  model: 'summarizer',
  tokensIn: 40,
  tokensOut: 7,
  durationMs: 120,
  identifiersKept: 1,
  identifiersTotal: 2,
  ...fields,
});

/** The SummaryStore contract (the fold's commit, the sweeper's query, the admin's revision list). */
export function describeSummaryStoreContract(name: string, make: MakeStores): void {
  describe(`SummaryStore contract: ${name}`, () => {
    it("commits a revision against the thread's version: the summary moves, the folded entries leave the window", async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'q1', 'a1');
      await exchange(stores, thread.id, 'q2', 'a2');
      const result = await stores.summaries.commit(commitOf(thread.id, thread.version));
      expect(result).toEqual({ committed: true, revision: 1 });
      const context = await stores.turns.loadContext(thread.id);
      expect(context?.thread).toMatchObject({
        version: thread.version + 1,
        summaryEncoding: ENCODING,
        lastFoldError: null,
        summary: { text: 'The user asked two questions.', tokens: 7, coveredThroughSeq: 2, revision: 1 },
      });
      expect(context?.thread.lastFoldAt).toBeInstanceOf(Date);
      expect(context?.window.map((entry) => entry.seq)).toEqual([3, 4]);
      const revisions = await stores.summaries.listRevisions(thread.id);
      expect(revisions).toEqual([
        expect.objectContaining({
          revision: 1,
          author: 'fold',
          authorId: null,
          text: 'The user asked two questions.',
          tokens: 7,
          fromSeq: 1,
          throughSeq: 2,
          model: 'summarizer',
          tokensIn: 40,
          tokensOut: 7,
          durationMs: 120,
          identifiersKept: 1,
          identifiersTotal: 2,
          redacted: false,
          segmentEnds: [29],
        }),
      ]);
      // The thread's summary keeps the segment ends the next fold appends after.
      expect(context?.thread.summary?.segmentEnds).toEqual([29]);
    });

    it('refuses a commit planned against an older version and changes nothing; of two folds planned together one wins', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'q1', 'a1');
      await exchange(stores, thread.id, 'q2', 'a2');
      expect(await stores.summaries.commit(commitOf(thread.id, thread.version + 3))).toEqual({ committed: false });
      expect((await stores.turns.loadContext(thread.id))?.window.map((entry) => entry.seq)).toEqual([1, 2, 3, 4]);
      expect(await stores.summaries.listRevisions(thread.id)).toEqual([]);

      const results = await Promise.all([
        stores.summaries.commit(
          commitOf(thread.id, thread.version, { text: 'one', throughSeq: 2, foldedSeqs: [1, 2] }),
        ),
        stores.summaries.commit(
          commitOf(thread.id, thread.version, { text: 'other', throughSeq: 3, foldedSeqs: [1, 2, 3] }),
        ),
      ]);
      expect(results.filter((result) => result.committed)).toHaveLength(1);
      const revisions = await stores.summaries.listRevisions(thread.id);
      expect(revisions).toHaveLength(1);
      const context = await stores.turns.loadContext(thread.id);
      expect(context?.thread.summary?.text).toBe(revisions[0]?.text);
      expect(context?.window.map((entry) => entry.seq)).toEqual(revisions[0]?.text === 'one' ? [3, 4] : [4]);
      // The next fold plans against the new version.
      expect(
        await stores.summaries.commit(
          commitOf(thread.id, thread.version + 1, { text: 'next', fromSeq: 1, throughSeq: 4, foldedSeqs: [3, 4] }),
        ),
      ).toEqual({ committed: true, revision: 2 });
      expect((await stores.summaries.listRevisions(thread.id)).map((revision) => revision.revision)).toEqual([1, 2]);
    });

    it('records a fold error until the next commit clears it', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'q1', 'a1');
      await stores.summaries.recordFoldError(thread.id, 'the summarizer timed out');
      expect((await stores.threads.findThread(thread.id, null))?.lastFoldError).toBe('the summarizer timed out');
      await stores.summaries.commit(commitOf(thread.id, thread.version, { foldedSeqs: [1] }));
      expect((await stores.threads.findThread(thread.id, null))?.lastFoldError).toBeNull();
    });

    it("finds the threads whose window passes the deployment's trigger (messages or tokens, summary included)", async () => {
      const stores = make();
      const due = await newThread(stores);
      const quiet = await newThread(stores);
      const wordy = await newThread(stores);
      for (let turn = 1; turn <= 3; turn += 1) await exchange(stores, due.id, `q${turn}`, `a${turn}`);
      await exchange(stores, quiet.id, 'q', 'a');
      await exchange(stores, wordy.id, 'x'.repeat(500), 'y'.repeat(500));
      const found = await stores.summaries.threadsNeedingFold({
        limit: 100_000,
        minWindowTokens: 900,
        minWindowMessages: 6,
        maxInputTokens: 4000,
      });
      expect(found).toContain(due.id);
      expect(found).toContain(wordy.id);
      expect(found).not.toContain(quiet.id);
      // After a fold the window is small again.
      await stores.summaries.commit(commitOf(due.id, due.version, { throughSeq: 4, foldedSeqs: [1, 2, 3, 4] }));
      const after = await stores.summaries.threadsNeedingFold({
        limit: 100_000,
        minWindowTokens: 900,
        minWindowMessages: 6,
        maxInputTokens: 4000,
      });
      expect(after).not.toContain(due.id);
    });
  });
}
