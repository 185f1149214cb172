import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../limits/rate-limiter';
import type { SavedMemory, SavedMemoryStore } from '../ports';
import {
  addSavedMemory,
  approveSavedMemory,
  deleteSavedMemory,
  dismissSavedMemory,
  editSavedMemory,
  listSavedMemories,
  saveMemoryFromThread,
  type SavedMemoryDeps,
} from './manage-saved-memories';
import { recountSavedMemoryTokens } from './recount-saved-memory-tokens';

/** An in-memory store (the real one is src/db/saved-memory-repository.ts, exercised by test/memory/saved-memories). */
function fakeStore(
  owners: Record<string, { userId: string; source: { threadId: string; seq: number; messageId: string } | null }> = {},
): SavedMemoryStore {
  const items: SavedMemory[] = [];
  let clock = 0;
  return {
    list: async (userId) =>
      items.filter((item) => item.userId === userId).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()),
    async create({ userId, text, tokens, source, maxItems, status }) {
      if (items.filter((item) => item.userId === userId).length >= maxItems) return null;
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, (clock += 1)));
      const item: SavedMemory = {
        id: `m${clock}`,
        userId,
        text,
        tokens,
        source: source ? { threadId: source.threadId, seq: source.seq } : null,
        status,
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
    async approve({ userId, id }) {
      const item = items.find((candidate) => candidate.id === id && candidate.userId === userId);
      if (!item) return null;
      item.status = 'active';
      return item;
    },
    async remove({ userId, id, status }) {
      const index = items.findIndex(
        (candidate) =>
          candidate.id === id && candidate.userId === userId && (status === undefined || candidate.status === status),
      );
      if (index < 0) return false;
      items.splice(index, 1);
      return true;
    },
    sourceOfThread: async (threadId) => owners[threadId] ?? null,
    listStaleTokens: async () => [],
    saveRecount: async () => undefined,
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
    const saved = await saveMemoryFromThread(
      { threadId: 't1', text: 'The passport is C4R55T901.', status: 'active' },
      wired,
    );
    expect(saved).toMatchObject({ saved: { userId: 'u', source: { threadId: 't1', seq: 7 } } });
    expect(await saveMemoryFromThread({ threadId: 't1', text: 'Another.', status: 'active' }, wired)).toMatchObject({
      refused: expect.stringContaining('MAX_MEMORY_ITEMS'),
    });
    expect(await saveMemoryFromThread({ threadId: 'gone', text: 'x', status: 'active' }, wired)).toEqual({
      refused: 'This conversation no longer exists.',
    });
  });

  it('a proposal (pending) is never in context, counts toward MAX_MEMORY_ITEMS, and is approved or dismissed by its user only', async () => {
    const wired = deps({
      store: fakeStore({ t1: { userId: 'u', source: { threadId: 't1', seq: 3, messageId: 'msg' } } }),
      maxItems: 2,
    });
    const proposed = await saveMemoryFromThread({ threadId: 't1', text: 'Proposed fact.', status: 'pending' }, wired);
    if (!('saved' in proposed)) throw new Error('not proposed');
    expect(proposed.saved).toMatchObject({ status: 'pending', inContext: false });
    const other = await saveMemoryFromThread({ threadId: 't1', text: 'Second.', status: 'pending' }, wired);
    expect(other).toMatchObject({ saved: { status: 'pending' } });
    await expect(addSavedMemory({ userId: 'u', text: 'Third.' }, wired)).rejects.toMatchObject({
      code: 'QUOTA_EXCEEDED',
    });
    await expect(approveSavedMemory({ userId: 'stranger', id: proposed.saved.id }, wired)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await approveSavedMemory({ userId: 'u', id: proposed.saved.id }, wired)).toMatchObject({
      status: 'active',
      inContext: true,
    });
    // An approved item is deleted, not dismissed.
    await expect(dismissSavedMemory({ userId: 'u', id: proposed.saved.id }, wired)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    if (!('saved' in other)) throw new Error('not proposed');
    await dismissSavedMemory({ userId: 'u', id: other.saved.id }, wired);
    expect((await listSavedMemories('u', wired)).map((item) => [item.text, item.status])).toEqual([
      ['Proposed fact.', 'active'],
    ]);
  });

  it('recounts items counted for an earlier rendering, unless edited meanwhile', async () => {
    const stale = [
      { id: 'a', text: 'One.' },
      { id: 'b', text: 'Two, a longer one.' },
    ];
    const saved: { id: string; text: string; tokens: number }[] = [];
    const recounted = await recountSavedMemoryTokens({
      store: {
        listStaleTokens: async () => stale.splice(0),
        saveRecount: async (input) => {
          saved.push(input);
        },
      },
      counter: { countText: (text: string) => text.length },
    });
    expect(recounted).toBe(2);
    expect(saved).toEqual([
      { id: 'a', text: 'One.', tokens: '- "One."'.length + 1 },
      { id: 'b', text: 'Two, a longer one.', tokens: '- "Two, a longer one."'.length + 1 },
    ]);
  });
});
