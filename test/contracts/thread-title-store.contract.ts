import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { MakePortStores } from './port-fixtures';
import { exchange, newThread, send } from './store-fixtures';

/** The ThreadTitleStore contract (automatic titles: only over the default title, never over a user's own). */
export function describeThreadTitleStoreContract(name: string, make: MakePortStores): void {
  describe(`ThreadTitleStore contract: ${name}`, () => {
    it("reads an untitled thread's first user message and the first complete answer after it", async () => {
      const stores = make();
      const thread = await newThread(stores);
      // Nothing to title from yet: no message, then only a message waiting in the queue (no seq).
      expect(await stores.titles.firstExchange(thread.id)).toBeNull();
      await send(stores, thread.id, 'queued first');
      expect(await stores.titles.firstExchange(thread.id)).toBeNull();
      // Its turn started (the message has its seq), its answer still streaming.
      const started = await stores.turns.nextTurn({
        threadId: thread.id,
        owner: `process-${randomUUID()}`,
        ttlMs: 30_000,
      });
      if (started.outcome !== 'started') throw new Error('no turn started');
      await stores.turns.appendTurnMessage({
        threadId: thread.id,
        turnId: started.turn.id,
        role: 'assistant',
        content: 'The answer so f',
        status: 'streaming',
      });
      expect(await stores.titles.firstExchange(thread.id)).toEqual({
        userText: 'queued first',
        answerText: null,
        branch: false,
        openaiClient: false,
      });

      const other = await newThread(stores);
      await exchange(stores, other.id, 'how do tides work?', 'The moon pulls the sea.');
      await exchange(stores, other.id, 'and waves?', 'Wind.');
      expect(await stores.titles.firstExchange(other.id)).toEqual({
        userText: 'how do tides work?',
        answerText: 'The moon pulls the sea.',
        branch: false,
        openaiClient: false,
      });
      expect(await stores.titles.firstExchange(randomUUID())).toBeNull();
    });

    it('tells a branch and a thread of an OpenAI client apart', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'plan a trip', 'Where to?');
      const forked = await stores.forks.forkThread({
        parentId: thread.id,
        ownerId: thread.ownerId,
        throughSeq: 2,
        title: 'New chat',
        maxThreads: 100,
      });
      if (!('thread' in forked)) throw new Error('no fork');
      expect(await stores.titles.firstExchange(forked.thread.id)).toMatchObject({
        userText: 'plan a trip',
        answerText: 'Where to?',
        branch: true,
        openaiClient: false,
      });
      await stores.conversations.setClientSettings({
        threadId: thread.id,
        settings: { instructions: null, tools: [] },
      });
      expect(await stores.titles.firstExchange(thread.id)).toMatchObject({ branch: false, openaiClient: true });
    });

    it('sets an automatic title once, over the default title only', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'how do tides work?');
      const titled = await stores.titles.setAutomaticTitle(thread.id, 'Tides');
      expect(titled).toMatchObject({ id: thread.id, title: 'Tides' });
      expect((await stores.threads.findThread(thread.id, thread.ownerId))?.title).toBe('Tides');
      // Titled now: nothing to read, and a second title (a retried job) does not replace the first.
      expect(await stores.titles.firstExchange(thread.id)).toBeNull();
      expect(await stores.titles.setAutomaticTitle(thread.id, 'Ocean tides')).toBeNull();
      expect((await stores.threads.findThread(thread.id, thread.ownerId))?.title).toBe('Tides');
      expect(await stores.titles.setAutomaticTitle(randomUUID(), 'Gone')).toBeNull();
    });

    it("never replaces a user's own title: a rename that came first, or a title given at creation", async () => {
      const stores = make();
      const renamed = await newThread(stores);
      await exchange(stores, renamed.id, 'how do tides work?');
      await stores.threads.renameThread(renamed.id, 'My tides');
      expect(await stores.titles.firstExchange(renamed.id)).toBeNull();
      expect(await stores.titles.setAutomaticTitle(renamed.id, 'Tides')).toBeNull();
      expect((await stores.threads.findThread(renamed.id, renamed.ownerId))?.title).toBe('My tides');

      const named = await newThread(stores, { title: 'Named at start' });
      await exchange(stores, named.id, 'hello');
      expect(await stores.titles.firstExchange(named.id)).toBeNull();
      expect(await stores.titles.setAutomaticTitle(named.id, 'Greeting')).toBeNull();
      expect((await stores.threads.findThread(named.id, named.ownerId))?.title).toBe('Named at start');
    });

    it("takes an automatic title back to the default when its first exchange is forgotten; never a user's title", async () => {
      const stores = make();
      const thread = await newThread(stores);
      const first = await exchange(stores, thread.id, 'how do tides work?', 'The moon pulls the sea.');
      const second = await exchange(stores, thread.id, 'and waves?', 'Wind.');
      await stores.titles.setAutomaticTitle(thread.id, 'Tides');
      const titleOf = async (id: string) => (await stores.threads.findThread(id, null))?.title;
      // A later message is not what the title was made of.
      await stores.memory.forget({ threadId: thread.id, messageIds: [second.user.id] });
      expect(await titleOf(thread.id)).toBe('Tides');
      expect(await stores.titles.firstExchange(thread.id)).toBeNull();
      await stores.memory.forget({ threadId: thread.id, messageIds: [first.answer.id] });
      expect(await titleOf(thread.id)).toBe('New chat');
      // Untitled again: the next automatic title is made of what is left.
      expect(await stores.titles.firstExchange(thread.id)).toMatchObject({
        userText: 'how do tides work?',
        answerText: 'Wind.',
      });

      const renamed = await newThread(stores);
      const exchanged = await exchange(stores, renamed.id, 'how do tides work?');
      await stores.threads.renameThread(renamed.id, 'My tides');
      await stores.memory.forget({ threadId: renamed.id, messageIds: [exchanged.user.id] });
      expect(await titleOf(renamed.id)).toBe('My tides');
    });

    it('gives a branch of a titled thread no automatic title: it keeps the title it was given', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'plan a trip');
      await stores.titles.setAutomaticTitle(thread.id, 'Trip');
      const forked = await stores.forks.forkThread({
        parentId: thread.id,
        ownerId: thread.ownerId,
        throughSeq: 2,
        title: 'Trip (branch)',
        maxThreads: 100,
      });
      if (!('thread' in forked)) throw new Error('no fork');
      expect(await stores.titles.firstExchange(forked.thread.id)).toBeNull();
      expect(await stores.titles.setAutomaticTitle(forked.thread.id, 'Other')).toBeNull();
    });
  });
}
