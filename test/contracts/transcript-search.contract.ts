import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Thread } from '../../src/core/domain/types';
import type { MakePortStores, PortStores } from './port-fixtures';
import { exchange, foldCommit, newThread, send } from './store-fixtures';

// Every query word below occurs in the texts as written (no plural, no stop word), so what matches does not depend on
// the deployment's text search configuration (stemming), which the fake does not reproduce; nor is the order of
// the results asserted (Postgres' BM25 ranking): the contract is which messages a search may return.

const fork = async (stores: PortStores, parent: Thread, throughSeq: number): Promise<Thread> => {
  const forked = await stores.forks.forkThread({
    parentId: parent.id,
    ownerId: parent.ownerId,
    throughSeq,
    title: `Fork of ${parent.title}`,
    maxThreads: 100,
  });
  if (!('thread' in forked)) throw new Error(`fork refused: ${forked.refused}`);
  return forked.thread;
};

const seqsOf = (matches: { seq: number }[]) => matches.map((match) => match.seq).sort((a, b) => a - b);

/** The TranscriptSearch contract: the filters of each search (owner, forgotten, superseded, unfinished, fork family). */
export function describeTranscriptSearchContract(name: string, make: MakePortStores): void {
  describe(`TranscriptSearch contract: ${name}`, () => {
    it("searches the thread's own searchable messages: not forgotten, superseded, unfinished or another thread's", async () => {
      const stores = make();
      const thread = await newThread(stores);
      const first = await exchange(stores, thread.id, 'tell me about the zebra', 'the zebra has stripes'); // #1 #2
      await exchange(stores, thread.id, 'unrelated question', 'nothing to see'); // #3 #4
      const last = await exchange(stores, thread.id, 'zebra again', 'final zebra answer'); // #5 #6
      await exchange(stores, (await newThread(stores, { ownerId: thread.ownerId })).id, 'zebra elsewhere', 'ok');
      await stores.memory.forget({ threadId: thread.id, messageIds: [first.user.id] });
      const { turn } = await stores.memory.queueRegenerate({ threadId: thread.id, userMessageId: last.user.id });
      await stores.turns.nextTurn({ threadId: thread.id, owner: 'runner', ttlMs: 30_000 });
      const streaming = await stores.turns.appendTurnMessage({
        threadId: thread.id,
        turnId: turn.id,
        role: 'assistant',
        content: 'a zebra still streaming',
        status: 'streaming',
      });

      const found = await stores.search.searchForModel({ threadId: thread.id, query: 'zebra', limit: 10 });
      expect(seqsOf(found)).toEqual([2, 5]);
      expect(found.find((match) => match.seq === 2)).toMatchObject({
        messageId: first.answer.id,
        role: 'assistant',
        content: 'the zebra has stripes',
      });
      expect(found.every((match) => match.score > 0)).toBe(true);
      expect(
        seqsOf(await stores.search.searchForModel({ threadId: thread.id, query: 'zebra', limit: 1 })),
      ).toHaveLength(1);
      expect(
        seqsOf(await stores.search.searchForModel({ threadId: thread.id, query: 'zebra', limit: 10, beforeSeq: 5 })),
      ).toEqual([2]);
      expect(await stores.search.searchForModel({ threadId: thread.id, query: 'giraffe', limit: 10 })).toEqual([]);
      expect(
        seqsOf(
          await stores.search.messagesAt({ threadId: thread.id, seqs: [1, 2, 3, 4, 5, 6, streaming.seq ?? 7, 99] }),
        ),
      ).toEqual([2, 3, 4, 5]);
    });

    it('searches from the context start on', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'zebra before', 'ok'); // #1 #2
      await stores.memory.resetContext(thread.id);
      await exchange(stores, thread.id, 'zebra after', 'ok'); // #3 #4
      expect(seqsOf(await stores.search.searchForModel({ threadId: thread.id, query: 'zebra', limit: 10 }))).toEqual([
        3,
      ]);
      expect(seqsOf(await stores.search.messagesAt({ threadId: thread.id, seqs: [1, 2, 3, 4] }))).toEqual([3, 4]);
      expect(await stores.search.messagesAt({ threadId: thread.id, seqs: [] })).toEqual([]);
    });

    it("searches the owner's other threads: never another user's, the fork family, a forgotten message; copies once", async () => {
      const stores = make();
      const asking = await newThread(stores, { title: 'Asking' });
      const { ownerId } = asking;
      await exchange(stores, asking.id, 'zebra in the asking thread', 'ok');
      const askingFork = await fork(stores, asking, 2);
      await exchange(stores, askingFork.id, 'zebra in the fork', 'ok');
      const sibling = await fork(stores, asking, 2);
      await exchange(stores, sibling.id, 'zebra in the sibling', 'ok');
      const other = await newThread(stores, { ownerId, title: 'Other' });
      const kept = await exchange(stores, other.id, 'zebra in the other thread', 'ok'); // #1 #2
      const secret = await exchange(stores, other.id, 'zebra secret', 'ok'); // #3 #4
      const otherFork = await fork(stores, other, 4);
      await exchange(stores, otherFork.id, 'zebra in the other fork', 'ok');
      await stores.memory.forget({ threadId: other.id, messageIds: [secret.user.id] });
      const stranger = await newThread(stores);
      await exchange(stores, stranger.id, 'zebra of a stranger', 'ok');

      const search = (threadId: string, defaultScope: 'thread' | 'user' = 'user') =>
        stores.search.searchElsewhere({ threadId, query: 'zebra', limit: 20, defaultScope });
      const found = await search(askingFork.id);
      expect(found.map((match) => [match.threadTitle, match.content]).sort()).toEqual(
        [
          ['Fork of Other', 'zebra in the other fork'],
          ['Other', 'zebra in the other thread'],
        ].sort(),
      );
      expect(found.find((match) => match.content === 'zebra in the other thread')).toMatchObject({
        threadId: other.id,
        messageId: kept.user.id,
        seq: 1,
        role: 'user',
      });
      // Asked from the other side, the asking thread's family is searched (its messages and copies once each).
      expect((await search(other.id)).map((match) => match.content).sort()).toEqual(
        ['zebra in the asking thread', 'zebra in the fork', 'zebra in the sibling'].sort(),
      );
      // The thread's recall scope, else the default, decides whether to look at all.
      expect(await search(askingFork.id, 'thread')).toEqual([]);
      await stores.memory.updateSettings({
        threadId: askingFork.id,
        settings: { recallScope: 'thread' },
        memoryMode: 'summary',
      });
      expect(await search(askingFork.id)).toEqual([]);
      await stores.memory.updateSettings({
        threadId: askingFork.id,
        settings: { recallScope: 'user' },
        memoryMode: 'summary',
      });
      expect(await search(askingFork.id, 'thread')).toHaveLength(2);
      // A deleted thread is gone from the search.
      await stores.threads.deleteThread(otherFork.id);
      expect((await search(askingFork.id)).map((match) => match.content)).toEqual(['zebra in the other thread']);
    });

    it("auto-recall (TurnStore's context read): older than the window, not pinned or forgotten; saved memories; other threads by scope", async () => {
      const stores = make();
      const thread = await newThread(stores, { title: 'Asking' });
      const { ownerId } = thread;
      await exchange(stores, thread.id, 'zebra one', 'a1'); // #1 #2
      const forgotten = await exchange(stores, thread.id, 'zebra two', 'zebra three'); // #3 #4
      await exchange(stores, thread.id, 'zebra in the window', 'ok'); // #5 #6
      expect(await stores.summaries.commit(foldCommit(thread.id, thread.version, 4))).toMatchObject({
        committed: true,
      });
      await stores.memory.pin({ threadId: thread.id, seqs: [1], maxPinnedTokens: 100 });
      await stores.memory.forget({ threadId: thread.id, messageIds: [forgotten.answer.id] });
      const other = await newThread(stores, { ownerId, title: 'Other' });
      await exchange(stores, other.id, 'zebra elsewhere', 'ok');
      const item = { userId: ownerId, tokens: 10, source: null, maxItems: 10 };
      await stores.savedMemories.create({ ...item, text: 'likes zebras', status: 'active' });
      await stores.savedMemories.create({ ...item, text: 'proposed only', status: 'pending' });

      await send(stores, thread.id, 'what about the zebra?');
      const started = await stores.recallTurns.nextTurn({ threadId: thread.id, owner: 'runner', ttlMs: 30_000 });
      if (started.outcome !== 'started') throw new Error('no turn started');
      expect(started.context.window.map((entry) => entry.seq)).toEqual([5, 6, 7]);
      expect(started.context.recalled?.map((message) => [message.seq, message.content])).toEqual([[3, 'zebra two']]);
      expect(started.context.recalledElsewhere).toBeUndefined();
      expect(started.context.savedMemories?.map((saved) => saved.text)).toEqual(['likes zebras']);
      // The same read on demand; without `recall`, neither candidates nor saved memories.
      expect((await stores.recallTurns.loadContext(thread.id, { recall: true }))?.recalled).toEqual(
        started.context.recalled,
      );
      const plain = await stores.recallTurns.loadContext(thread.id);
      expect([plain?.recalled, plain?.savedMemories]).toEqual([undefined, undefined]);
      // With the user scope, the owner's other threads too; a slot of 0 turns recall off.
      await stores.memory.updateSettings({
        threadId: thread.id,
        settings: { recallScope: 'user' },
        memoryMode: 'summary',
      });
      const wide = await stores.recallTurns.loadContext(thread.id, { recall: true });
      expect(wide?.recalledElsewhere?.map((message) => [message.thread, message.seq, message.content])).toEqual([
        [{ id: other.id, title: 'Other' }, 1, 'zebra elsewhere'],
      ]);
      await stores.memory.updateSettings({ threadId: thread.id, settings: { recallTokens: 0 }, memoryMode: 'summary' });
      expect((await stores.recallTurns.loadContext(thread.id, { recall: true }))?.recalled).toBeUndefined();
    });

    it("finds for people the messages holding every word, in the owner's threads or one, a page at a time", async () => {
      const stores = make();
      const thread = await newThread(stores, { title: 'Animals' });
      const { ownerId } = thread;
      await exchange(stores, thread.id, 'zebra and giraffe together', 'only a zebra here'); // #1 #2
      const second = await newThread(stores, { ownerId, title: 'More animals' });
      await exchange(stores, second.id, 'a giraffe then a zebra', 'ok');
      const forgotten = await exchange(stores, second.id, 'zebra giraffe forgotten', 'ok');
      await stores.memory.forget({ threadId: second.id, messageIds: [forgotten.user.id] });
      const stranger = await newThread(stores);
      await exchange(stores, stranger.id, 'zebra giraffe of a stranger', 'ok');

      const people = (options: { threadId?: string; limit?: number; offset?: number } = {}) =>
        stores.search.searchForPeople({ ownerId, query: 'zebra giraffe', limit: 10, offset: 0, ...options });
      const all = await people();
      expect(all.hasMore).toBe(false);
      expect(all.hits.map((hit) => [hit.threadTitle, hit.seq, hit.forkCopy]).sort()).toEqual([
        ['Animals', 1, false],
        ['More animals', 1, false],
      ]);
      for (const hit of all.hits) {
        expect(hit.highlights.map(({ start, end }) => hit.snippet.slice(start, end).toLowerCase()).sort()).toEqual([
          'giraffe',
          'zebra',
        ]);
      }
      expect((await people({ threadId: thread.id })).hits.map((hit) => hit.threadId)).toEqual([thread.id]);
      const page1 = await people({ limit: 1 });
      const page2 = await people({ limit: 1, offset: 1 });
      expect([page1.hasMore, page2.hasMore]).toEqual([true, false]);
      expect([...page1.hits, ...page2.hits].map((hit) => hit.messageId).sort()).toEqual(
        all.hits.map((hit) => hit.messageId).sort(),
      );
      // A fork's copy says so.
      const copy = await fork(stores, thread, 2);
      expect((await people({ threadId: copy.id })).hits).toEqual([
        expect.objectContaining({ threadId: copy.id, seq: 1, forkCopy: true }),
      ]);
      expect(
        (await stores.search.searchForPeople({ ownerId: `user-${randomUUID()}`, query: 'zebra', limit: 10, offset: 0 }))
          .hits,
      ).toEqual([]);
    });
  });
}
