import { describe, expect, it } from 'vitest';
import { buildSummarizerInputs } from './build-summarizer-inputs';
import { createTokenCounter } from './token-counter';
import { entry, user } from './test-fixtures';
import type { SummaryState } from './types';

const summary = (tokens: number): SummaryState => ({ text: 'so far', tokens, coveredThroughSeq: 0, revision: 1 });
const covered = (chunks: { entries: { seq: number }[] }[]) =>
  chunks.flatMap((chunk) => chunk.entries.map((item) => item.seq));

describe('buildSummarizerInputs', () => {
  it('returns no chunk when nothing is folded', () => {
    expect(buildSummarizerInputs({ summary: null, folded: [], budget: 6000 })).toEqual([]);
  });

  it('puts everything in one chunk when it fits on top of the previous summary', () => {
    const folded = [user(1, 100), user(2, 100)];
    const chunks = buildSummarizerInputs({ summary: summary(1000), folded, budget: 6000 });
    expect(chunks).toEqual([{ fromSeq: 1, throughSeq: 2, entries: folded, tokens: 200, truncatedSeqs: [] }]);
  });

  it('chunks progressively without losing an entry: first on the previous summary, then on the capped summary so far', () => {
    const folded = Array.from({ length: 20 }, (_, index) => user(index + 1, 1000));
    const chunks = buildSummarizerInputs({
      summary: summary(2000),
      folded,
      budget: 6000,
      summaryMaxTokens: 1200,
      overheadTokens: 500,
    });
    // First chunk room: 6000 - 500 - 2000 = 3500 (3 entries); later: 6000 - 500 - 1200 = 4300 (4 entries).
    expect(chunks.map((chunk) => chunk.entries.length)).toEqual([3, 4, 4, 4, 4, 1]);
    expect(covered(chunks)).toEqual(folded.map((item) => item.seq));
    expect(chunks.map((chunk) => [chunk.fromSeq, chunk.throughSeq])).toEqual([
      [1, 3],
      [4, 7],
      [8, 11],
      [12, 15],
      [16, 19],
      [20, 20],
    ]);
    for (const chunk of chunks) expect(chunk.tokens).toBeLessThanOrEqual(4300);
  });

  it('gives an entry larger than a chunk its own chunk, cut in the middle and marked, still covered', () => {
    const huge = entry(2, 'tool', 9000, { content: `${'alpha '.repeat(4000)}END`, toolCallId: 'c1' });
    const folded = [user(1, 100), huge, user(3, 100)];
    const chunks = buildSummarizerInputs({ summary: null, folded, budget: 6000 });
    expect(covered(chunks)).toEqual([1, 2, 3]);
    const own = chunks[1];
    expect(own?.entries).toHaveLength(1);
    expect(own?.truncatedSeqs).toEqual([2]);
    expect(own?.tokens).toBeLessThanOrEqual(4800);
    const content = own?.entries[0]?.content ?? '';
    expect(content).toContain('characters cut to fit the summarizer input');
    expect(content.startsWith('alpha alpha')).toBe(true);
    expect(content.endsWith('END')).toBe(true);
    expect(content.length).toBeLessThan(huge.content.length);
  });

  it('cuts exactly to the room with a counter', () => {
    const counter = createTokenCounter('o200k_base');
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(1000);
    const big = entry(1, 'user', counter.countMessage({ role: 'user', content: text }), { content: text });
    const [chunk] = buildSummarizerInputs({
      summary: null,
      folded: [big],
      budget: 2000,
      summaryMaxTokens: 500,
      counter,
    });
    const cut = chunk?.entries[0];
    expect(cut && counter.countMessage(cut)).toBeLessThanOrEqual(2000);
    expect(chunk?.truncatedSeqs).toEqual([1]);
  });

  it('refuses a budget that leaves no room for entries', () => {
    expect(() => buildSummarizerInputs({ summary: summary(6000), folded: [user(1)], budget: 6000 })).toThrow(
      RangeError,
    );
    expect(() =>
      buildSummarizerInputs({ summary: null, folded: [user(1)], budget: 1000, summaryMaxTokens: 1200 }),
    ).toThrow(/no room/);
  });
});
