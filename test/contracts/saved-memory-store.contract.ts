import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SavedMemorySource, SavedMemoryStatus } from '../../src/core/ports';
import type { MakePortStores, PortStores } from './port-fixtures';
import { exchange, newThread, pause, send } from './store-fixtures';

async function newUser(stores: PortStores): Promise<string> {
  const userId = `user-${randomUUID()}`;
  await stores.threads.ensureUser(userId, 'guest');
  return userId;
}

const save = (
  stores: PortStores,
  userId: string,
  text: string,
  options: { maxItems?: number; status?: SavedMemoryStatus; source?: SavedMemorySource | null } = {},
) =>
  stores.savedMemories.create({
    userId,
    text,
    tokens: text.length,
    source: options.source ?? null,
    maxItems: options.maxItems ?? 10,
    status: options.status ?? 'active',
  });

const texts = async (stores: PortStores, userId: string) =>
  (await stores.savedMemories.list(userId)).map((item) => [item.text, item.status]);

/** The SavedMemoryStore contract (a user's saved memories: the cap, approval, edits, recounts, their source). */
export function describeSavedMemoryStoreContract(name: string, make: MakePortStores): void {
  describe(`SavedMemoryStore contract: ${name}`, () => {
    it("lists the user's items newest first, and only theirs", async () => {
      const stores = make();
      const [alice, bob] = [await newUser(stores), await newUser(stores)];
      await save(stores, alice, 'likes tea');
      await pause(5); // created_at has millisecond precision: distinct times, a defined order
      await save(stores, alice, 'lives in Lyon', { status: 'pending' });
      await save(stores, bob, 'likes coffee');
      expect(await texts(stores, alice)).toEqual([
        ['lives in Lyon', 'pending'],
        ['likes tea', 'active'],
      ]);
      expect(await texts(stores, bob)).toEqual([['likes coffee', 'active']]);
    });

    it('refuses an item past the cap, pending ones counted, per user', async () => {
      const stores = make();
      const [alice, bob] = [await newUser(stores), await newUser(stores)];
      expect(await save(stores, alice, 'one', { maxItems: 2 })).toMatchObject({ text: 'one', tokens: 3 });
      expect(await save(stores, alice, 'two', { maxItems: 2, status: 'pending' })).not.toBeNull();
      expect(await save(stores, alice, 'three', { maxItems: 2 })).toBeNull();
      expect(await save(stores, bob, 'his own', { maxItems: 2 })).not.toBeNull();
      // Concurrent writes stay within the cap.
      const racing = await Promise.all(['a', 'b', 'c', 'd'].map((text) => save(stores, bob, text, { maxItems: 3 })));
      expect(racing.filter((item) => item !== null)).toHaveLength(2);
      expect(await stores.savedMemories.list(bob)).toHaveLength(3);
    });

    it('approves a pending item once; another user, an unknown or malformed id finds nothing', async () => {
      const stores = make();
      const [alice, bob] = [await newUser(stores), await newUser(stores)];
      const pending = await save(stores, alice, 'proposed', { status: 'pending' });
      expect(await stores.savedMemories.approve({ userId: bob, id: pending!.id })).toBeNull();
      expect(await stores.savedMemories.approve({ userId: alice, id: randomUUID() })).toBeNull();
      expect(await stores.savedMemories.approve({ userId: alice, id: 'not-a-uuid' })).toBeNull();
      await pause(5);
      const approved = await stores.savedMemories.approve({ userId: alice, id: pending!.id });
      expect(approved).toMatchObject({ id: pending!.id, status: 'active' });
      expect(approved!.updatedAt.getTime()).toBeGreaterThan(pending!.updatedAt.getTime());
      // An active item comes back unchanged.
      expect(await stores.savedMemories.approve({ userId: alice, id: pending!.id })).toEqual(approved);
    });

    it("updates and removes the user's own items only, removal by status when asked", async () => {
      const stores = make();
      const [alice, bob] = [await newUser(stores), await newUser(stores)];
      const item = await save(stores, alice, 'likes tea');
      const update = { id: item!.id, text: 'likes green tea', tokens: 4 };
      expect(await stores.savedMemories.update({ userId: bob, ...update })).toBeNull();
      expect(await stores.savedMemories.update({ userId: alice, ...update })).toMatchObject({
        text: 'likes green tea',
        tokens: 4,
      });
      expect(await stores.savedMemories.remove({ userId: bob, id: item!.id })).toBe(false);
      expect(await stores.savedMemories.remove({ userId: alice, id: item!.id, status: 'pending' })).toBe(false);
      expect(await stores.savedMemories.remove({ userId: alice, id: 'not-a-uuid' })).toBe(false);
      expect(await texts(stores, alice)).toEqual([['likes green tea', 'active']]);
      expect(await stores.savedMemories.remove({ userId: alice, id: item!.id, status: 'active' })).toBe(true);
      expect(await stores.savedMemories.list(alice)).toEqual([]);
      expect(await stores.savedMemories.remove({ userId: alice, id: item!.id })).toBe(false);
    });

    it('recounts stale items unless their text changed meanwhile', async () => {
      const stores = make();
      const alice = await newUser(stores);
      const kept = await save(stores, alice, 'kept as is');
      const edited = await save(stores, alice, 'edited meanwhile');
      const fresh = await save(stores, alice, 'never stale');
      await stores.markSavedMemoriesStale([kept!.id, edited!.id]);
      const ids = [kept!.id, edited!.id, fresh!.id];
      const stale = async () =>
        (await stores.savedMemories.listStaleTokens(10_000)).filter((item) => ids.includes(item.id));
      expect((await stale()).map((item) => item.text).sort()).toEqual(['edited meanwhile', 'kept as is']);
      // An edit counts its text anew: no longer stale, and a recount of the old text is not stored.
      await stores.savedMemories.update({ userId: alice, id: edited!.id, text: 'edited text', tokens: 7 });
      await stores.savedMemories.saveRecount({ id: edited!.id, text: 'edited meanwhile', tokens: 99 });
      await stores.savedMemories.saveRecount({ id: kept!.id, text: 'kept as is', tokens: 42 });
      expect(await stale()).toEqual([]);
      const tokens = Object.fromEntries(
        (await stores.savedMemories.list(alice)).map((item) => [item.text, item.tokens]),
      );
      expect(tokens).toEqual({ 'kept as is': 42, 'edited text': 7, 'never stale': 'never stale'.length });
    });

    it("names a thread's owner and newest user message with a seq as the source; forgetting it removes its items", async () => {
      const stores = make();
      const thread = await newThread(stores);
      expect(await stores.savedMemories.sourceOfThread(thread.id)).toEqual({ userId: thread.ownerId, source: null });
      await exchange(stores, thread.id, 'q1');
      const second = await exchange(stores, thread.id, 'q2');
      await send(stores, thread.id, 'queued, no seq yet');
      const found = await stores.savedMemories.sourceOfThread(thread.id);
      expect(found).toEqual({
        userId: thread.ownerId,
        source: { threadId: thread.id, seq: 3, messageId: second.user.id },
      });
      expect(await stores.savedMemories.sourceOfThread(randomUUID())).toBeNull();
      expect(await stores.savedMemories.sourceOfThread('not-a-uuid')).toBeNull();
      const item = await save(stores, thread.ownerId, 'from q2', { source: found!.source });
      expect(item?.source).toEqual({ threadId: thread.id, seq: 3 });
      await save(stores, thread.ownerId, 'by hand');
      await stores.memory.forget({ threadId: thread.id, messageIds: [second.user.id] });
      expect(await texts(stores, thread.ownerId)).toEqual([['by hand', 'active']]);
    });

    it('keeps an item whose thread is deleted, without its source', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'q1');
      const { source } = (await stores.savedMemories.sourceOfThread(thread.id))!;
      await save(stores, thread.ownerId, 'from q1', { source });
      await stores.threads.deleteThread(thread.id);
      expect(await stores.savedMemories.list(thread.ownerId)).toEqual([
        expect.objectContaining({ text: 'from q1', source: null }),
      ]);
    });
  });
}
