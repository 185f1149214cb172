import { describe, expect, it } from 'vitest';
import { createTextTokenCache } from './text-token-cache';

/** An encoder that counts its calls: one token per word. */
function countingEncoder() {
  const calls: string[] = [];
  return {
    calls,
    encode: (text: string) => {
      calls.push(text);
      return text.split(' ').length;
    },
  };
}

describe('createTextTokenCache', () => {
  it('encodes each text once per encoding, and again in another encoding', () => {
    const cache = createTextTokenCache({ maxEntries: 10, maxChars: 1000, maxTextChars: 100 });
    const encoder = countingEncoder();
    expect(cache.count('o200k_base', 'the system prefix', encoder.encode)).toBe(3);
    expect(cache.count('o200k_base', 'the system prefix', encoder.encode)).toBe(3);
    expect(encoder.calls).toEqual(['the system prefix']);
    const other = (text: string) => encoder.encode(text) + 1;
    expect(cache.count('cl100k_base', 'the system prefix', other)).toBe(4);
    expect(cache.count('cl100k_base', 'the system prefix', other)).toBe(4);
    expect(cache.count('o200k_base', 'the system prefix', encoder.encode)).toBe(3);
    expect(encoder.calls).toHaveLength(2);
    expect(cache.size()).toEqual({ entries: 1, chars: 17 });
  });

  it('evicts the least recently used text beyond its entry bound', () => {
    const cache = createTextTokenCache({ maxEntries: 2, maxChars: 1000, maxTextChars: 100 });
    const encoder = countingEncoder();
    cache.count('o200k_base', 'a', encoder.encode);
    cache.count('o200k_base', 'b', encoder.encode);
    cache.count('o200k_base', 'a', encoder.encode); // a is now the most recent
    cache.count('o200k_base', 'c', encoder.encode); // evicts b
    expect(cache.size().entries).toBe(2);
    encoder.calls.length = 0;
    cache.count('o200k_base', 'a', encoder.encode);
    cache.count('o200k_base', 'c', encoder.encode);
    expect(encoder.calls).toEqual([]);
    cache.count('o200k_base', 'b', encoder.encode);
    expect(encoder.calls).toEqual(['b']);
  });

  it('keeps the remembered characters within its bound and never remembers a text over the per-text bound', () => {
    const cache = createTextTokenCache({ maxEntries: 100, maxChars: 50, maxTextChars: 20 });
    const encoder = countingEncoder();
    for (let index = 0; index < 30; index += 1) {
      cache.count('o200k_base', `text number ${index}`, encoder.encode);
      expect(cache.size().chars).toBeLessThanOrEqual(50);
    }
    const long = 'x'.repeat(21);
    expect(cache.count('o200k_base', long, encoder.encode)).toBe(1);
    expect(cache.count('o200k_base', long, encoder.encode)).toBe(1);
    expect(encoder.calls.filter((text) => text === long)).toHaveLength(2);
    expect(cache.size().entries).toBeGreaterThan(0);
  });
});
