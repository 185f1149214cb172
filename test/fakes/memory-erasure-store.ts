import type { ErasureStore } from '../../src/core/ports';
import { copy, type MemoryDatabase } from './memory-database';
import { createMemoryThreadStore } from './memory-thread-store';

/**
 * ErasureStore in memory (test/contracts/erasure-store.contract.ts holds it to the Postgres repository's behaviour):
 * the erased_users tombstones, and the erasure as the repository's transaction does it, table by table.
 */
export function createMemoryErasureStore(database: MemoryDatabase): ErasureStore {
  const threadIdsOf = (userId: string) =>
    [...database.threads.values()].filter((thread) => thread.ownerId === userId).map((thread) => thread.id);
  return {
    async erasureOf(userId) {
      const record = database.erasures.get(userId);
      return record ? copy(record) : null;
    },

    async threadIdsOf(userId) {
      return threadIdsOf(userId);
    },

    async toolRunIdsOfThread(threadId) {
      return database.toolRuns.filter((run) => run.threadId === threadId).map((run) => run.id);
    },

    async toolRunIdsOf(userId) {
      const ids = new Set(threadIdsOf(userId));
      return database.toolRuns.filter((run) => ids.has(run.threadId)).map((run) => run.id);
    },

    async erase({ userId, kind }) {
      const existing = database.users.get(userId);
      const erasedKind = existing === 'guest' ? 'guest' : existing ? 'external' : kind;
      const ids = threadIdsOf(userId);
      for (const run of database.toolRuns)
        if (ids.includes(run.threadId) && (run.status === 'queued' || run.status === 'running'))
          run.cancelRequested = true;
      // Audit rows keep who acted and when, never content.
      for (const entry of database.audit)
        if (
          (entry.threadId !== null && ids.includes(entry.threadId)) ||
          entry.details.ownerId === userId ||
          entry.details.userId === userId
        )
          entry.details = {};
      // Call records stay for the costs, anonymised (keepModelCallsOf), and a call of no thread loses its user.
      database.calls = database.calls.map((call) =>
        call.threadId !== null && ids.includes(call.threadId)
          ? {
              ...call,
              threadId: null,
              messageId: null,
              userId: null,
              error: call.error ? 'failed (the text went with the thread)' : null,
            }
          : call.userId === userId
            ? { ...call, userId: null }
            : call,
      );
      const threads = createMemoryThreadStore(database);
      for (const threadId of ids) await threads.deleteThread(threadId);
      database.savedMemories = database.savedMemories.filter((item) => item.userId !== userId);
      database.users.delete(userId);
      const tombstone = database.erasures.get(userId);
      database.erasures.set(userId, {
        erasedAt: new Date(),
        kind: tombstone?.kind === 'guest' ? 'guest' : erasedKind,
      });
      return { existed: existing !== undefined, threads: ids.length };
    },
  };
}
