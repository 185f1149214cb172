import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Thread } from '../../src/core/domain/types';
import type { MakePortStores, PortStores } from './port-fixtures';
import { exchange, newThread } from './store-fixtures';

/** A user's thread with an exchange, an async tool run, a fork, a saved memory, call records and audit entries. */
async function userWithEverything(stores: PortStores) {
  const thread = await newThread(stores);
  const { user, answer } = await exchange(stores, thread.id, 'remember my passport number');
  const { run } = await stores.toolRuns.createRun({
    threadId: thread.id,
    messageId: answer.id,
    toolCallId: `call-${randomUUID()}`,
    name: 'analyze',
    args: {},
    startedAtSeq: answer.seq ?? 0,
  });
  const forked = await stores.forks.forkThread({
    parentId: thread.id,
    ownerId: thread.ownerId,
    throughSeq: 2,
    title: 'Branch',
    maxThreads: 100,
  });
  if (!('thread' in forked)) throw new Error('no fork');
  const source = { threadId: thread.id, seq: user.seq ?? 0, messageId: user.id };
  await stores.savedMemories.create({
    userId: thread.ownerId,
    text: 'passport',
    tokens: 1,
    source,
    maxItems: 10,
    status: 'active',
  });
  const call = { model: 'm', estimatedPromptTokens: 10, reportedPromptTokens: 12, reportedCompletionTokens: 3 };
  await stores.calls.record({ ...call, threadId: thread.id, messageId: answer.id, purpose: 'chat', latencyMs: 5 });
  await stores.calls.record({
    ...call,
    threadId: null,
    userId: thread.ownerId,
    messageId: null,
    purpose: 'auxiliary',
    latencyMs: 5,
  });
  const actor = `admin-${randomUUID()}`;
  await stores.audit.record({ actor, action: 'thread.rename', threadId: thread.id, details: { title: 'secret' } });
  await stores.audit.record({ actor, action: 'user.limit', threadId: null, details: { userId: thread.ownerId } });
  return { thread, fork: forked.thread, runId: run.id, actor };
}

const auditOf = async (stores: PortStores, actor: string) =>
  (await stores.audit.list({ limit: 1000 })).items
    .filter((entry) => entry.actor === actor)
    .map((entry) => [entry.action, entry.details])
    .sort(([a], [b]) => String(a).localeCompare(String(b)));

/** The ErasureStore contract (a user's erasure: what goes, what stays anonymised, the tombstone). */
export function describeErasureStoreContract(name: string, make: MakePortStores): void {
  describe(`ErasureStore contract: ${name}`, () => {
    it("lists the user's threads (forks included) and tool runs, only theirs", async () => {
      const stores = make();
      const { thread, fork, runId } = await userWithEverything(stores);
      const other = await newThread(stores);
      expect((await stores.erasures.threadIdsOf(thread.ownerId)).sort()).toEqual([thread.id, fork.id].sort());
      expect(await stores.erasures.toolRunIdsOf(thread.ownerId)).toContain(runId);
      expect(await stores.erasures.toolRunIdsOfThread(thread.id)).toContain(runId);
      expect(await stores.erasures.threadIdsOf(other.ownerId)).toEqual([other.id]);
      expect(await stores.erasures.toolRunIdsOf(other.ownerId)).toEqual([]);
      expect(await stores.erasures.erasureOf(thread.ownerId)).toBeNull();
    });

    it('erases everything of the user, anonymises their call records and audit details, and leaves a tombstone', async () => {
      const stores = make();
      const { thread, fork, actor } = await userWithEverything(stores);
      const other: Thread = await newThread(stores);
      await exchange(stores, other.id, 'not erased');
      await stores.savedMemories.create({
        userId: other.ownerId,
        text: 'kept',
        tokens: 1,
        source: null,
        maxItems: 10,
        status: 'active',
      });
      expect(await stores.storedCallsOfUser(thread.ownerId)).toHaveLength(2);
      const before = Date.now();

      expect(await stores.erasures.erase({ userId: thread.ownerId, kind: 'external' })).toEqual({
        existed: true,
        threads: 2,
      });
      for (const id of [thread.id, fork.id]) {
        expect(await stores.threads.findThread(id, null)).toBeNull();
        expect(await stores.turns.loadContext(id)).toBeNull();
      }
      expect(await stores.erasures.threadIdsOf(thread.ownerId)).toEqual([]);
      expect(await stores.erasures.toolRunIdsOf(thread.ownerId)).toEqual([]);
      expect(await stores.savedMemories.list(thread.ownerId)).toEqual([]);
      expect(await stores.storedCallsOfUser(thread.ownerId)).toEqual([]);
      expect(await stores.storedCalls(thread.id)).toEqual([]);
      expect(await auditOf(stores, actor)).toEqual([
        ['thread.rename', {}],
        ['user.limit', {}],
      ]);
      // A guest stays a guest (the user row's kind wins over the caller's).
      const tombstone = await stores.erasures.erasureOf(thread.ownerId);
      expect(tombstone).toMatchObject({ kind: 'guest' });
      expect(tombstone!.erasedAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
      // Another user's things stay.
      expect(await stores.threads.findThread(other.id, other.ownerId)).not.toBeNull();
      expect(await stores.savedMemories.list(other.ownerId)).toHaveLength(1);
      expect(await stores.erasures.erasureOf(other.ownerId)).toBeNull();
    });

    it('writes a tombstone for a user who had no row, and a guest tombstone stays a guest one', async () => {
      const stores = make();
      const stranger = `user-${randomUUID()}`;
      expect(await stores.erasures.erase({ userId: stranger, kind: 'external' })).toEqual({
        existed: false,
        threads: 0,
      });
      expect(await stores.erasures.erasureOf(stranger)).toMatchObject({ kind: 'external' });
      const guest = `user-${randomUUID()}`;
      await stores.threads.ensureUser(guest, 'guest');
      await stores.erasures.erase({ userId: guest, kind: 'guest' });
      const first = await stores.erasures.erasureOf(guest);
      expect(await stores.erasures.erase({ userId: guest, kind: 'external' })).toEqual({ existed: false, threads: 0 });
      const second = await stores.erasures.erasureOf(guest);
      expect(second?.kind).toBe('guest');
      expect(second!.erasedAt.getTime()).toBeGreaterThanOrEqual(first!.erasedAt.getTime());
    });
  });
}
