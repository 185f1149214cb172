import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { MakePortStores, PortStores } from './port-fixtures';
import { exchange, foldCommit, newThread, send } from './store-fixtures';

/** Three exchanges (#1–#6), #1–#4 folded into revision 1, #1 pinned afterwards. */
async function parentThread(stores: PortStores) {
  const parent = await newThread(stores, { title: 'Parent' });
  for (const question of ['q1', 'q2', 'q3']) await exchange(stores, parent.id, question);
  expect(await stores.summaries.commit(foldCommit(parent.id, parent.version, 4))).toEqual({
    committed: true,
    revision: 1,
  });
  expect(await stores.memory.pin({ threadId: parent.id, seqs: [1], maxPinnedTokens: 100 })).toMatchObject({
    pinned: true,
  });
  await stores.memory.updateSettings({ threadId: parent.id, settings: { keep: 'messages=4' }, memoryMode: 'summary' });
  return parent;
}

const forkOf = (stores: PortStores, parent: { id: string; ownerId: string }, throughSeq: number, maxThreads = 100) =>
  stores.forks.forkThread({
    parentId: parent.id,
    ownerId: parent.ownerId,
    throughSeq,
    title: `Branch at #${throughSeq}`,
    maxThreads,
  });

const contents = async (stores: PortStores, threadId: string) =>
  (await stores.memory.listMessagesBySeq({ threadId, fromSeq: 1, throughSeq: 1000 })).map((message) => [
    message.seq,
    message.content,
  ]);

/** The ForkStore contract (branch from a message, edit a sent message, delete where a branch holds a copy). */
export function describeForkStoreContract(name: string, make: MakePortStores): void {
  describe(`ForkStore contract: ${name}`, () => {
    it('forks through a message: the transcript to it, the summary that covers nothing after it, the window, pins and settings', async () => {
      const stores = make();
      const parent = await parentThread(stores);
      const result = await forkOf(stores, parent, 6);
      if (!('thread' in result)) throw new Error(`refused: ${result.refused}`);
      const fork = result.thread;
      expect(fork).toMatchObject({
        title: 'Branch at #6',
        ownerId: parent.ownerId,
        lastSeq: 6,
        version: 0,
        forkedFrom: { threadId: parent.id, seq: 6 },
        contextStartSeq: 1,
        settings: { keep: 'messages=4' },
        summary: { text: 'Summary through #4.', tokens: 6, coveredThroughSeq: 4, revision: 1 },
      });
      expect(await contents(stores, fork.id)).toEqual(await contents(stores, parent.id));
      const context = await stores.turns.loadContext(fork.id);
      expect(context?.window.map((entry) => entry.seq)).toEqual([5, 6]);
      expect(context?.pinned.map((entry) => [entry.seq, entry.content])).toEqual([[1, 'q1']]);
      expect((await stores.summaries.listRevisions(fork.id)).map((revision) => revision.revision)).toEqual([1]);
      // The parent is untouched.
      expect((await stores.threads.findThread(parent.id, null))?.lastSeq).toBe(6);
    });

    it("forks before the summary's end: no summary, the folded entries rebuilt from the transcript; lists forks by point", async () => {
      const stores = make();
      const parent = await parentThread(stores);
      const early = await forkOf(stores, parent, 3);
      if (!('thread' in early)) throw new Error(`refused: ${early.refused}`);
      expect(early.thread.summary).toBeNull();
      expect(await contents(stores, early.thread.id)).toEqual([
        [1, 'q1'],
        [2, 'answer to q1'],
        [3, 'q2'],
      ]);
      const context = await stores.turns.loadContext(early.thread.id);
      expect(
        [...(context?.pinned ?? []), ...(context?.window ?? [])].map((entry) => [entry.seq, entry.content]).sort(),
      ).toEqual([
        [1, 'q1'],
        [2, 'answer to q1'],
        [3, 'q2'],
      ]);
      const late = await forkOf(stores, parent, 6);
      if (!('thread' in late)) throw new Error(`refused: ${late.refused}`);
      expect(
        (await stores.forks.listForks(parent.id)).map((record) => [record.threadId, record.seq, record.title]),
      ).toEqual([
        [early.thread.id, 3, 'Branch at #3'],
        [late.thread.id, 6, 'Branch at #6'],
      ]);
      expect(await stores.forks.listForks(early.thread.id)).toEqual([]);
    });

    it("refuses while a turn of the parent at or before the point is running (busy), and past the owner's cap (quota)", async () => {
      const stores = make();
      const parent = await newThread(stores);
      await exchange(stores, parent.id, 'q1');
      await send(stores, parent.id, 'q2');
      const started = await stores.turns.nextTurn({
        threadId: parent.id,
        owner: `process-${randomUUID()}`,
        ttlMs: 30_000,
      });
      expect(started.outcome).toBe('started');
      expect(await forkOf(stores, parent, 3)).toEqual({ refused: 'busy', owned: 1 });
      // Before the running turn's message: allowed.
      expect('thread' in (await forkOf(stores, parent, 2))).toBe(true);
      expect(await forkOf(stores, parent, 2, 2)).toEqual({ refused: 'quota', owned: 2 });
      expect(await stores.forks.listForks(parent.id)).toHaveLength(1);
    });

    it('finds the fork that holds a message sent with a client message id (a repeated edit)', async () => {
      const stores = make();
      const parent = await newThread(stores);
      await exchange(stores, parent.id, 'q1');
      const result = await forkOf(stores, parent, 1);
      if (!('thread' in result)) throw new Error(`refused: ${result.refused}`);
      const clientMessageId = randomUUID();
      await send(stores, result.thread.id, 'edited q1', { clientMessageId });
      expect(await stores.forks.findForkByClientMessageId({ parentId: parent.id, clientMessageId })).toBe(
        result.thread.id,
      );
      expect(
        await stores.forks.findForkByClientMessageId({ parentId: parent.id, clientMessageId: randomUUID() }),
      ).toBeNull();
      expect(await stores.forks.findForkByClientMessageId({ parentId: result.thread.id, clientMessageId })).toBeNull();
    });

    it("lists the live copies of messages in the owner's other threads, both ways, not the forgotten ones", async () => {
      const stores = make();
      const parent = await newThread(stores);
      const first = await exchange(stores, parent.id, 'q1');
      const result = await forkOf(stores, parent, 2);
      if (!('thread' in result)) throw new Error(`refused: ${result.refused}`);
      const fork = result.thread;
      const [copyOfQ1, copyOfA1] = await stores.memory.findMessagesBySeq(fork.id, [1, 2]);
      expect(
        await stores.forks.listCopies({ messageIds: [first.user.id, first.answer.id], ownerId: parent.ownerId }),
      ).toEqual(
        [
          { threadId: fork.id, title: 'Branch at #2', messageId: copyOfQ1!.id, seq: 1 },
          { threadId: fork.id, title: 'Branch at #2', messageId: copyOfA1!.id, seq: 2 },
        ].sort((a, b) => (a.messageId < b.messageId ? -1 : 1)),
      );
      expect(await stores.forks.listCopies({ messageIds: [copyOfQ1!.id], ownerId: parent.ownerId })).toEqual([
        { threadId: parent.id, title: 'New chat', messageId: first.user.id, seq: 1 },
      ]);
      expect(await stores.forks.listCopies({ messageIds: [first.user.id], ownerId: 'someone-else' })).toEqual([]);
      await stores.memory.forget({ threadId: fork.id, messageIds: [copyOfQ1!.id] });
      expect(await stores.forks.listCopies({ messageIds: [first.user.id], ownerId: parent.ownerId })).toEqual([]);
      expect(await stores.forks.listCopies({ messageIds: [], ownerId: parent.ownerId })).toEqual([]);
    });
  });
}
