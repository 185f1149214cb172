import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { codeOf, exchange, newThread, pause, send, type MakeStores } from './store-fixtures';

/** The ThreadStore contract (thread routes, guest sign-in, quotas): both the repository and the fake must pass it. */
export function describeThreadStoreContract(name: string, make: MakeStores): void {
  describe(`ThreadStore contract: ${name}`, () => {
    it('creates a thread with an empty context: no seq, no summary, version 0, the default title', async () => {
      const stores = make();
      const thread = await newThread(stores);
      expect(thread).toMatchObject({
        title: 'New chat',
        lastSeq: 0,
        summary: null,
        contextStartSeq: 1,
        memoryMode: 'summary',
        settings: {},
        version: 0,
        lastFoldAt: null,
        lastFoldError: null,
        forkedFrom: null,
      });
      expect(thread.createdAt).toBeInstanceOf(Date);
      expect((await newThread(stores, { title: 'Trip' })).title).toBe('Trip');
    });

    it('refuses a thread past maxThreads with QUOTA_EXCEEDED, per owner; ensureUser may run twice', async () => {
      const stores = make();
      const ownerId = `user-${randomUUID()}`;
      await stores.threads.ensureUser(ownerId, 'guest');
      await stores.threads.ensureUser(ownerId, 'guest');
      await stores.threads.createThread({ ownerId, maxThreads: 2 });
      await stores.threads.createThread({ ownerId, maxThreads: 2 });
      expect(await codeOf(stores.threads.createThread({ ownerId, maxThreads: 2 }))).toBe('QUOTA_EXCEEDED');
      expect((await stores.threads.listThreads({ ownerId, limit: 10 })).items).toHaveLength(2);
      // Another owner's threads do not count toward this owner's quota.
      const otherId = `user-${randomUUID()}`;
      await stores.threads.ensureUser(otherId, 'guest');
      const others = [
        await stores.threads.createThread({ ownerId: otherId, maxThreads: 2 }),
        await stores.threads.createThread({ ownerId: otherId, maxThreads: 2 }),
      ];
      expect(others.map((thread) => thread.ownerId)).toEqual([otherId, otherId]);
      expect(await codeOf(stores.threads.createThread({ ownerId: otherId, maxThreads: 2 }))).toBe('QUOTA_EXCEEDED');
    });

    it('finds a thread for its owner only (any owner when null); a malformed or unknown id is not found', async () => {
      const stores = make();
      const thread = await newThread(stores);
      expect((await stores.threads.findThread(thread.id, thread.ownerId))?.id).toBe(thread.id);
      expect((await stores.threads.findThread(thread.id, null))?.id).toBe(thread.id);
      expect(await stores.threads.findThread(thread.id, 'someone-else')).toBeNull();
      expect(await stores.threads.findThread('not-a-uuid', null)).toBeNull();
      expect(await stores.threads.findThread(randomUUID(), null)).toBeNull();
    });

    it("lists an owner's threads newest activity first, a page at a time, each exactly once", async () => {
      const stores = make();
      const first = await newThread(stores);
      const ownerId = first.ownerId;
      for (let index = 0; index < 4; index += 1) await newThread(stores, { ownerId });
      await newThread(stores);
      await pause(10);
      await send(stores, first.id, 'activity moves it to the top');
      const whole = await stores.threads.listThreads({ ownerId, limit: 100 });
      expect(whole.items).toHaveLength(5);
      expect(whole.items[0]?.id).toBe(first.id);
      expect(whole.nextCursor).toBeNull();
      const paged: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page += 1) {
        const result = await stores.threads.listThreads({ ownerId, limit: 2, ...(cursor ? { cursor } : {}) });
        paged.push(...result.items.map((thread) => thread.id));
        if (!result.nextCursor) break;
        cursor = result.nextCursor;
      }
      expect(paged).toEqual(whole.items.map((thread) => thread.id));
    });

    it('renames a thread, counts its messages, and deletes it with everything it holds', async () => {
      const stores = make();
      const thread = await newThread(stores);
      expect((await stores.threads.renameThread(thread.id, 'Renamed')).title).toBe('Renamed');
      expect((await stores.threads.findThread(thread.id, null))?.title).toBe('Renamed');
      const { answer } = await exchange(stores, thread.id, 'hello');
      await send(stores, thread.id, 'pending one');
      expect(await stores.threads.countMessages(thread.id)).toBe(3);
      await stores.threads.deleteThread(thread.id);
      expect(await stores.threads.findThread(thread.id, null)).toBeNull();
      expect(await stores.threads.countMessages(thread.id)).toBe(0);
      expect(await stores.transcript.findMessage(thread.id, answer.id)).toBeNull();
      await stores.threads.deleteThread(thread.id);
    });
  });
}
