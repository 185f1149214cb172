import { threadQuotaExceeded } from '../../src/core/limits/thread-quota';
import type { ThreadStore } from '../../src/core/ports';
import { newId, toThread, type MemoryDatabase } from './memory-database';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** ThreadStore in memory (test/contracts/thread-store.contract.ts holds it to the Postgres repository's behaviour). */
export function createMemoryThreadStore(database: MemoryDatabase): ThreadStore {
  const owned = (ownerId: string) => [...database.threads.values()].filter((thread) => thread.ownerId === ownerId);
  return {
    async ensureUser(userId, kind) {
      if (!database.users.has(userId)) database.users.set(userId, kind);
    },
    async createThread({ ownerId, title, maxThreads }) {
      if (!database.users.has(ownerId)) throw new Error(`foreign key: no user ${ownerId}`);
      const count = owned(ownerId).length;
      if (count >= maxThreads) throw threadQuotaExceeded(count, maxThreads, 'start another');
      const now = new Date();
      const thread = {
        id: newId(),
        ownerId,
        title: title || 'New chat',
        createdAt: now,
        updatedAt: now,
        lastActivityAt: now,
        lastSeq: 0,
        summary: null,
        summaryEncoding: null,
        contextStartSeq: 1,
        memoryMode: 'summary' as const,
        settings: {},
        version: 0,
        lastFoldAt: null,
        lastFoldError: null,
        forkedFrom: null,
        lease: null,
      };
      database.threads.set(thread.id, thread);
      if (title) database.titleSources.set(thread.id, 'user');
      return toThread(thread);
    },
    async findThread(threadId, ownerId) {
      if (!UUID.test(threadId)) return null;
      const thread = database.threads.get(threadId);
      return thread && (ownerId === null || thread.ownerId === ownerId) ? toThread(thread) : null;
    },
    async listThreads({ ownerId, cursor, limit }) {
      // Newest activity first, ties by id descending; the cursor is the last item's (activity, id).
      const after = cursor
        ? (JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { at: number; id: string })
        : null;
      const sorted = owned(ownerId)
        .sort(
          (a, b) => b.lastActivityAt.getTime() - a.lastActivityAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
        )
        .filter(
          (thread) =>
            !after ||
            thread.lastActivityAt.getTime() < after.at ||
            (thread.lastActivityAt.getTime() === after.at && thread.id < after.id),
        );
      const items = sorted.slice(0, limit).map(toThread);
      const last = items.at(-1);
      const nextCursor =
        sorted.length > limit && last
          ? Buffer.from(JSON.stringify({ at: last.lastActivityAt.getTime(), id: last.id })).toString('base64url')
          : null;
      return { items, nextCursor };
    },
    async renameThread(threadId, title) {
      const thread = database.threads.get(threadId);
      if (!thread) throw new Error(`record to update not found: ${threadId}`);
      thread.title = title;
      thread.updatedAt = new Date();
      database.titleSources.set(threadId, 'user');
      return toThread(thread);
    },
    async deleteThread(threadId) {
      // Messages, entries, summaries, tool runs and turns cascade; call records stay, detached (their user kept).
      database.threads.delete(threadId);
      database.titleSources.delete(threadId);
      database.messages = database.messages.filter((message) => message.threadId !== threadId);
      database.entries = database.entries.filter((entry) => entry.threadId !== threadId);
      database.turns = database.turns.filter((turn) => turn.threadId !== threadId);
      database.revisions = database.revisions.filter((revision) => revision.threadId !== threadId);
      database.toolRuns = database.toolRuns.filter((run) => run.threadId !== threadId);
      database.conversations = database.conversations.filter((row) => row.threadId !== threadId);
      // A saved memory outlives the thread it came from, without its source (source_thread_id ON DELETE SET NULL).
      for (const item of database.savedMemories) if (item.source?.threadId === threadId) item.source = null;
      database.calls = database.calls.map((call) =>
        call.threadId === threadId
          ? { ...call, threadId: null, messageId: null, error: call.error ? 'failed' : null }
          : call,
      );
    },
    async countMessages(threadId) {
      return database.messages.filter((message) => message.threadId === threadId).length;
    },
  };
}
