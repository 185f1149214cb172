import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../limits/rate-limiter';
import type { SavedMemoryStore } from '../ports';
import {
  addSavedMemory,
  deleteSavedMemory,
  editSavedMemory,
  listSavedMemories,
  saveMemoryFromThread,
  type SavedMemoryDeps,
} from './manage-saved-memories';
import type { SavedMemory } from './saved-memory';

/** An in-memory store (the real one is src/db/saved-memory-repository.ts, exercised by test/memory/saved-memories). */
function fakeStore(
  owners: Record<string, { userId: string; source: { threadId: string; seq: number; messageId: string } | null }> = {},
): SavedMemoryStore {
  const items: SavedMemory[] = [];
  let clock = 0;
  return {
    list: async (userId) =>
      items.filter((item) => item.userId === userId).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()),
    async create({ userId, text, tokens, source, maxItems }) {
      if (items.filter((item) => item.userId === userId).length >= maxItems) return null;
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, (clock += 1)));
      const item: SavedMemory = {
        id: `m${clock}`,
        userId,
        text,
        tokens,
        source: source ? { threadId: source.threadId, seq: source.seq } : null,
        createdAt: at,
        updatedAt: at,
      };
      items.push(item);
      return item;
    },
    async update({ userId, id, text, tokens }) {
      const item = items.find((candidate) => candidate.id === id && candidate.userId === userId);
      if (!item) return null;
      Object.assign(item, { text, tokens });
      return item;
    },
    async remove({ userId, id }) {
      const index = items.findIndex((candidate) => candidate.id === id && candidate.userId === userId);
      if (index < 0) return false;
      items.splice(index, 1);
      return true;
    },
    sourceOfThread: async (threadId) => owners[threadId] ?? null,
  };
}

function deps(overrides: Partial<SavedMemoryDeps> = {}): SavedMemoryDeps {
  return {
    store: fakeStore(),
    counter: { countText: (text: string) => Math.ceil(text.length / 4) },
    maxItems: 3,
    capTokens: 12,
    writeLimiter: createMemoryRateLimiter({ limit: 100 }),
    ...overrides,
  };
}

describe('saved memories use cases', () => {
  it('trims, validates the text naming the field, and refuses past MAX_MEMORY_ITEMS', async () => {
    const wired = deps();
    expect((await addSavedMemory({ userId: 'u', text: '  vegan  ' }, wired)).text).toBe('vegan');
    await expect(addSavedMemory({ userId: 'u', text: '   ' }, wired)).rejects.toMatchObject({
      code: 'VALIDATION',
      details: { field: 'text' },
    });
    await expect(addSavedMemory({ userId: 'u', text: 'x'.repeat(1001) }, wired)).rejects.toMatchObject({
      code: 'VALIDATION',
    });
    await addSavedMemory({ userId: 'u', text: 'two' }, wired);
    await addSavedMemory({ userId: 'u', text: 'three' }, wired);
    await expect(addSavedMemory({ userId: 'u', text: 'four' }, wired)).rejects.toMatchObject({
      code: 'QUOTA_EXCEEDED',
    });
    expect(await addSavedMemory({ userId: 'other', text: 'mine' }, wired)).toMatchObject({ text: 'mine' });
  });

  it('marks the items over the cap inContext false (the newest win)', async () => {
    const wired = deps({ capTokens: 8 });
    await addSavedMemory({ userId: 'u', text: 'an older fact here' }, wired);
    await addSavedMemory({ userId: 'u', text: 'newest' }, wired);
    expect((await listSavedMemories('u', wired)).map((item) => [item.text, item.inContext])).toEqual([
      ['newest', true],
      ['an older fact here', false],
    ]);
  });

  it("edits and deletes only the user's own items (NOT_FOUND otherwise), and rate-limits writes", async () => {
    const wired = deps({ writeLimiter: createMemoryRateLimiter({ limit: 2 }) });
    const item = await addSavedMemory({ userId: 'u', text: 'one' }, wired);
    await expect(editSavedMemory({ userId: 'stranger', id: item.id, text: 'mine' }, wired)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect((await editSavedMemory({ userId: 'u', id: item.id, text: 'uno' }, wired)).text).toBe('uno');
    await expect(deleteSavedMemory({ userId: 'u', id: item.id }, wired)).rejects.toMatchObject({
      code: 'RATE_LIMITED',
    });
  });

  it("save_memory saves for the thread's owner with the asking message as its source, and turns refusals into text", async () => {
    const wired = deps({
      store: fakeStore({ t1: { userId: 'u', source: { threadId: 't1', seq: 7, messageId: 'msg' } } }),
      maxItems: 1,
    });
    const saved = await saveMemoryFromThread({ threadId: 't1', text: 'The passport is C4R55T901.' }, wired);
    expect(saved).toMatchObject({ saved: { userId: 'u', source: { threadId: 't1', seq: 7 } } });
    expect(await saveMemoryFromThread({ threadId: 't1', text: 'Another.' }, wired)).toMatchObject({
      refused: expect.stringContaining('MAX_MEMORY_ITEMS'),
    });
    expect(await saveMemoryFromThread({ threadId: 'gone', text: 'x' }, wired)).toEqual({
      refused: 'This conversation no longer exists.',
    });
  });
});
