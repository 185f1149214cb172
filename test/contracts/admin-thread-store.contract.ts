import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FoldLagPolicy, SummaryCommit } from '../../src/core/ports';
import type { MakePortStores, PortStores } from './port-fixtures';
import { codeOf, exchange, foldCommit, newThread, pause } from './store-fixtures';

const POLICY: FoldLagPolicy = {
  minWindowTokens: 1_000_000,
  minWindowMessages: 6,
  keep: { kind: 'messages', value: 2 },
};

const commitOf = (threadId: string, expectedVersion: number, throughSeq: number, text: string): SummaryCommit => ({
  ...foldCommit(threadId, expectedVersion, throughSeq),
  text,
  segmentEnds: [text.length],
  tokens: text.length,
  tokensOut: 5,
});

/** One owner's threads: a quiet one, one with a long summary, one with a fold error, one with a window to fold. */
async function seed(stores: PortStores) {
  const ownerId = `owner-${randomUUID()}`;
  const quiet = await newThread(stores, { ownerId, title: 'Quiet thread' });
  await exchange(stores, quiet.id, 'hello');
  await pause(5);
  const summarized = await newThread(stores, { ownerId, title: 'Summarized thread' });
  for (const question of ['q1', 'q2', 'q3']) await exchange(stores, summarized.id, question);
  const summary = `A summary longer than the preview. ${'x'.repeat(300)}`;
  await stores.summaries.commit(commitOf(summarized.id, summarized.version, 4, summary));
  await pause(5);
  const failing = await newThread(stores, { ownerId, title: 'Failing thread' });
  await exchange(stores, failing.id, 'fails');
  await stores.summaries.recordFoldError(failing.id, 'summarizer timed out');
  await pause(5);
  const lagging = await newThread(stores, { ownerId, title: 'Lagging thread' });
  for (const question of ['a', 'b', 'c', 'd']) await exchange(stores, lagging.id, question);
  return { ownerId, quiet, summarized, summary, failing, lagging };
}

/** The AdminThreadStore contract (the admin console's thread list and a thread's transcript size). */
export function describeAdminThreadStoreContract(name: string, make: MakePortStores): void {
  describe(`AdminThreadStore contract: ${name}`, () => {
    it('lists threads with their owner and context health; newest activity first by default', async () => {
      const stores = make();
      const { ownerId, quiet, summarized, summary, failing, lagging } = await seed(stores);
      const { items, nextCursor } = await stores.admin.listThreads({
        query: ownerId,
        limit: 10,
        sort: 'activity',
        policy: POLICY,
      });
      expect(nextCursor).toBeNull();
      expect(items.map((row) => row.id)).toEqual([lagging.id, failing.id, summarized.id, quiet.id]);
      const byId = new Map(items.map((row) => [row.id, row]));
      expect(byId.get(quiet.id)).toMatchObject({
        title: 'Quiet thread',
        ownerId,
        ownerKind: 'guest',
        memoryMode: 'summary',
        messageCount: 2,
        summaryPreview: '',
        summaryTokens: 0,
        summaryRevision: 0,
        coveredThroughSeq: 0,
        windowEntries: 2,
        windowTokens: 'hello'.length + 'answer to hello'.length,
        foldLagEntries: 0,
        lastFoldAt: null,
        lastFoldError: null,
      });
      expect(byId.get(summarized.id)).toMatchObject({
        messageCount: 6,
        summaryPreview: summary.slice(0, 240),
        summaryTokens: summary.length,
        summaryRevision: 1,
        coveredThroughSeq: 4,
        windowEntries: 2,
        lastFoldError: null,
      });
      expect(byId.get(summarized.id)?.lastFoldAt).toBeInstanceOf(Date);
      expect(byId.get(failing.id)?.lastFoldError).toBe('summarizer timed out');
      // 8 window entries, the trigger (6 messages) fires, the keep policy keeps 2: 6 would be folded.
      expect(byId.get(lagging.id)).toMatchObject({ windowEntries: 8, foldLagEntries: 6 });
      expect(items[0]?.createdAt).toBeInstanceOf(Date);
      expect(items[0]?.lastActivityAt).toBeInstanceOf(Date);
    });

    it('sorts by summary size, fold errors or fold lag, ties by activity', async () => {
      const stores = make();
      const { ownerId, quiet, summarized, failing, lagging } = await seed(stores);
      const ids = async (sort: 'summary' | 'errors' | 'lag') =>
        (await stores.admin.listThreads({ query: ownerId, limit: 10, sort, policy: POLICY })).items.map(
          (row) => row.id,
        );
      expect(await ids('summary')).toEqual([summarized.id, lagging.id, failing.id, quiet.id]);
      expect(await ids('errors')).toEqual([failing.id, lagging.id, summarized.id, quiet.id]);
      expect(await ids('lag')).toEqual([lagging.id, failing.id, summarized.id, quiet.id]);
      const tokenPolicy: FoldLagPolicy = {
        minWindowTokens: 1,
        minWindowMessages: 1_000,
        keep: { kind: 'tokens', value: 'answer to d'.length },
      };
      const rows = (await stores.admin.listThreads({ query: ownerId, limit: 10, sort: 'lag', policy: tokenPolicy }))
        .items;
      // By tokens: the newest entry fills the keep exactly; the seven older ones are beyond it.
      expect(rows.find((row) => row.id === lagging.id)?.foldLagEntries).toBe(7);
    });

    it('finds threads by title, owner or thread id, and pages through a sort without repeats', async () => {
      const stores = make();
      const { ownerId, summarized, failing } = await seed(stores);
      const titled = await stores.admin.listThreads({ query: 'Failing', limit: 50, sort: 'activity', policy: POLICY });
      expect(titled.items.map((row) => row.id)).toContain(failing.id);
      expect(titled.items.every((row) => row.title.includes('Failing'))).toBe(true);
      const byThreadId = await stores.admin.listThreads({
        query: summarized.id.toUpperCase(),
        limit: 50,
        sort: 'activity',
        policy: POLICY,
      });
      expect(byThreadId.items.map((row) => row.id)).toEqual([summarized.id]);
      for (const sort of ['activity', 'summary', 'errors', 'lag'] as const) {
        const whole = (await stores.admin.listThreads({ query: ownerId, limit: 10, sort, policy: POLICY })).items.map(
          (row) => row.id,
        );
        const paged: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 6; page += 1) {
          const result = await stores.admin.listThreads({
            query: ownerId,
            limit: 1,
            sort,
            policy: POLICY,
            ...(cursor ? { cursor } : {}),
          });
          paged.push(...result.items.map((row) => row.id));
          if (!result.nextCursor) break;
          cursor = result.nextCursor;
        }
        expect(paged).toEqual(whole);
      }
      expect(
        await codeOf(stores.admin.listThreads({ limit: 1, sort: 'activity', policy: POLICY, cursor: 'garbage' })),
      ).toBe('VALIDATION');
    });

    it("measures a thread's transcript: messages, tokens, characters, last seq (zeros for an unknown thread)", async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'héllo', 'world!');
      expect(await stores.admin.transcriptSize(thread.id)).toEqual({
        messages: 2,
        tokens: 'héllo'.length + 'world!'.length,
        characters: 11,
        lastSeq: 2,
      });
      expect(await stores.admin.transcriptSize(randomUUID())).toEqual({
        messages: 0,
        tokens: 0,
        characters: 0,
        lastSeq: 0,
      });
    });
  });
}
