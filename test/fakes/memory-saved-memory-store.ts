import type { SavedMemory, SavedMemoryStore } from '../../src/core/ports';
import { copy, newId, type MemoryDatabase, type SavedMemoryRow } from './memory-database';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function toSavedMemory(row: SavedMemoryRow): SavedMemory {
  const { sourceMessageId: _sourceMessageId, tokensStale: _tokensStale, ...item } = row;
  return copy(item);
}

/**
 * SavedMemoryStore in memory (test/contracts/saved-memory-store.contract.ts holds it to the Postgres repository's
 * behaviour): the saved_memories table of the MemoryDatabase, every read and write scoped to the user.
 */
export function createMemorySavedMemoryStore(database: MemoryDatabase): SavedMemoryStore {
  const itemOf = (userId: string, id: string) =>
    UUID.test(id) ? database.savedMemories.find((item) => item.id === id && item.userId === userId) : undefined;
  return {
    async list(userId) {
      // Newest first: the table's insertion order reversed (created_at DESC).
      return database.savedMemories
        .filter((item) => item.userId === userId)
        .reverse()
        .map(toSavedMemory);
    },

    async create({ userId, text, tokens, source, maxItems, status }) {
      if (!database.users.has(userId)) throw new Error(`foreign key: no user ${userId}`);
      if (database.savedMemories.filter((item) => item.userId === userId).length >= maxItems) return null;
      const now = new Date();
      const row: SavedMemoryRow = {
        id: newId(),
        userId,
        text,
        tokens,
        source: source ? { threadId: source.threadId, seq: source.seq } : null,
        sourceMessageId: source?.messageId ?? null,
        status,
        tokensStale: false,
        createdAt: now,
        updatedAt: now,
      };
      database.savedMemories.push(row);
      return toSavedMemory(row);
    },

    async update({ userId, id, text, tokens }) {
      const row = itemOf(userId, id);
      if (!row) return null;
      Object.assign(row, { text, tokens, tokensStale: false, updatedAt: new Date() });
      return toSavedMemory(row);
    },

    async approve({ userId, id }) {
      const row = itemOf(userId, id);
      if (!row) return null;
      if (row.status === 'pending') Object.assign(row, { status: 'active', updatedAt: new Date() });
      return toSavedMemory(row);
    },

    async listStaleTokens(limit) {
      return database.savedMemories
        .filter((item) => item.tokensStale)
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit)
        .map((item) => ({ id: item.id, text: item.text }));
    },

    async saveRecount({ id, text, tokens }) {
      const row = database.savedMemories.find((item) => item.id === id && item.text === text && item.tokensStale);
      if (row) Object.assign(row, { tokens, tokensStale: false });
    },

    async remove({ userId, id, status }) {
      const row = itemOf(userId, id);
      if (!row || (status && row.status !== status)) return false;
      database.savedMemories = database.savedMemories.filter((item) => item !== row);
      return true;
    },

    async sourceOfThread(threadId) {
      const thread = UUID.test(threadId) ? database.threads.get(threadId) : undefined;
      if (!thread) return null;
      const newest = database.messages
        .filter(
          (message) =>
            message.threadId === threadId && message.role === 'user' && message.seq !== null && !message.deleted,
        )
        .sort((a, b) => (b.seq ?? 0) - (a.seq ?? 0))[0];
      return {
        userId: thread.ownerId,
        source: newest ? { threadId, seq: newest.seq ?? 0, messageId: newest.id } : null,
      };
    },
  };
}
