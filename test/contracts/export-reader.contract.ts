import { describe, expect, it } from 'vitest';
import type { SummaryCommit } from '../../src/core/ports';
import type { MakePortStores } from './port-fixtures';
import { exchange, foldCommit, newThread, send } from './store-fixtures';

const commitOf = (threadId: string, expectedVersion: number, throughSeq: number): SummaryCommit => ({
  ...foldCommit(threadId, expectedVersion, throughSeq),
  text: `Summary through ${throughSeq}.`,
  segmentEnds: [`Summary through ${throughSeq}.`.length],
  tokens: 5,
  tokensOut: 5,
  foldedSeqs: [throughSeq - 1, throughSeq],
});

/** The ExportReader contract (a thread's export, read a page at a time whatever its length). */
export function describeExportReaderContract(name: string, make: MakePortStores): void {
  describe(`ExportReader contract: ${name}`, () => {
    it('reads the transcript by seq a page at a time, without the messages still waiting in the queue', async () => {
      const stores = make();
      const thread = await newThread(stores);
      for (const question of ['q1', 'q2', 'q3']) await exchange(stores, thread.id, question);
      await send(stores, thread.id, 'still queued');
      const seqs: number[] = [];
      const contents: string[] = [];
      let afterSeq = 0;
      for (let page = 0; page < 10; page += 1) {
        const messages = await stores.exportReader.messagesAfter({ threadId: thread.id, afterSeq, limit: 4 });
        if (messages.length === 0) break;
        expect(messages.length).toBeLessThanOrEqual(4);
        seqs.push(...messages.map((message) => message.seq ?? -1));
        contents.push(...messages.map((message) => message.content));
        afterSeq = messages.at(-1)?.seq ?? afterSeq;
      }
      expect(seqs).toEqual([1, 2, 3, 4, 5, 6]);
      expect(contents).toEqual(['q1', 'answer to q1', 'q2', 'answer to q2', 'q3', 'answer to q3']);
      expect(await stores.exportReader.messagesAfter({ threadId: thread.id, afterSeq: 6, limit: 4 })).toEqual([]);
    });

    it("reads the summary revisions ascending, a page at a time, only the thread's own", async () => {
      const stores = make();
      const thread = await newThread(stores);
      const other = await newThread(stores);
      for (const question of ['q1', 'q2', 'q3']) await exchange(stores, thread.id, question);
      await exchange(stores, other.id, 'elsewhere');
      for (const [index, throughSeq] of [2, 4, 6].entries()) {
        expect(await stores.summaries.commit(commitOf(thread.id, thread.version + index, throughSeq))).toEqual({
          committed: true,
          revision: index + 1,
        });
      }
      expect(await stores.summaries.commit(commitOf(other.id, other.version, 2))).toEqual({
        committed: true,
        revision: 1,
      });
      const first = await stores.exportReader.revisionsAfter({ threadId: thread.id, afterRevision: 0, limit: 2 });
      expect(
        first.map((revision) => [revision.revision, revision.text, revision.throughSeq, revision.redacted]),
      ).toEqual([
        [1, 'Summary through 2.', 2, false],
        [2, 'Summary through 4.', 4, false],
      ]);
      const second = await stores.exportReader.revisionsAfter({ threadId: thread.id, afterRevision: 2, limit: 2 });
      expect(second.map((revision) => revision.revision)).toEqual([3]);
      expect(second[0]).toMatchObject({ author: 'fold', authorId: null, model: 'summarizer', tokens: 5, fromSeq: 1 });
      expect(second[0]?.createdAt).toBeInstanceOf(Date);
    });
  });
}
