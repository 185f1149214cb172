import { describe, expect, it } from 'vitest';
import { createTokenCounter } from '../context';
import type { ThreadContext } from '../domain/types';
import { refreshTokenCounts } from './refresh-token-counts';

const cl100k = createTokenCounter('cl100k_base');
const o200k = createTokenCounter('o200k_base');

function contextCountedWith(counter: typeof cl100k): ThreadContext {
  const entry = (seq: number, role: 'user' | 'assistant', content: string) => ({
    seq,
    role,
    content,
    tokens: counter.countMessage({ role, content }),
    tokenEncoding: counter.encoding,
  });
  const summaryText = 'The user ordered ORD-7731 (3 × 2.5 kg) for 2026-12-01 delivery to Lyon.';
  return {
    thread: {
      id: 't1',
      ownerId: 'u',
      title: 't',
      createdAt: new Date(0),
      updatedAt: new Date(0),
      lastActivityAt: new Date(0),
      lastSeq: 3,
      summary: { text: summaryText, tokens: counter.countText(summaryText), coveredThroughSeq: 1, revision: 1 },
      summaryEncoding: counter.encoding,
      contextStartSeq: 1,
      memoryMode: 'summary',
      settings: {},
      version: 1,
      lastFoldAt: null,
      lastFoldError: null,
      forkedFrom: null,
    },
    window: [
      entry(2, 'user', 'Ünïcödé façade — 東京 and emojis 🎉🎉 matter for counts'),
      entry(3, 'assistant', 'function f(x) { return x ** 2; }'),
    ],
    pinned: [],
  };
}

describe('refreshTokenCounts', () => {
  it('leaves a context counted with the configured encoding alone', () => {
    const context = contextCountedWith(o200k);
    const result = refreshTokenCounts(context, o200k);
    expect(result.changes).toBeNull();
    expect(result.context).toBe(context);
  });

  it('recounts entries and the summary made with another encoding, so no sum mixes encodings', () => {
    const old = contextCountedWith(cl100k);
    const fresh = contextCountedWith(o200k);
    const result = refreshTokenCounts(old, o200k);
    expect(result.context.window.map((entry) => entry.tokens)).toEqual(fresh.window.map((entry) => entry.tokens));
    expect(result.context.window.every((entry) => entry.tokenEncoding === 'o200k_base')).toBe(true);
    expect(result.context.thread.summary?.tokens).toBe(fresh.thread.summary?.tokens);
    expect(result.changes).toEqual({
      threadId: 't1',
      encoding: 'o200k_base',
      entries: fresh.window.map((entry) => ({ seq: entry.seq, tokens: entry.tokens })),
      summaryTokens: fresh.thread.summary?.tokens,
    });
    // The two encodings really differ on this text, so the test would catch a missed recount.
    expect(old.window.map((entry) => entry.tokens)).not.toEqual(fresh.window.map((entry) => entry.tokens));
  });

  it('recounts only the stale entries', () => {
    const mixed = contextCountedWith(o200k);
    const stale = { ...mixed.window[0]!, tokens: 999, tokenEncoding: 'cl100k_base' as const };
    const result = refreshTokenCounts({ ...mixed, window: [stale, mixed.window[1]!] }, o200k);
    expect(result.changes?.entries).toEqual([{ seq: 2, tokens: mixed.window[0]!.tokens }]);
    expect(result.changes?.summaryTokens).toBeNull();
  });
});
