import type { EncodingName } from './types';

/** Bounds of a {@link TextTokenCache}. */
export interface TextTokenCacheOptions {
  /** Distinct texts remembered (each with its count in every encoding it was measured in); least recently used evicted first. */
  maxEntries: number;
  /** Characters of all remembered texts together (what bounds the memory). */
  maxChars: number;
  /** Texts longer than this are counted every time, never remembered. */
  maxTextChars: number;
}

/** Remembers the token count of each text, keyed by content and encoding, within fixed bounds. */
export interface TextTokenCache {
  /** The remembered count of `text` in `encoding`, or `encode(text)` (then remembered if it fits the bounds). */
  count(encoding: EncodingName, text: string, encode: (text: string) => number): number;
  /** Remembered texts and their characters (for tests and diagnostics). */
  size(): { entries: number; chars: number };
}

/**
 * A bounded least-recently-used cache of token counts: one entry per text, holding its count in each encoding it was
 * measured in (the same text counts differently in different encodings). No key string is built per lookup.
 */
export function createTextTokenCache(options: TextTokenCacheOptions): TextTokenCache {
  // Insertion order is recency: the first key is the least recently used.
  const counts = new Map<string, Partial<Record<EncodingName, number>>>();
  let chars = 0;

  return {
    count(encoding, text, encode) {
      const known = counts.get(text);
      const tokens = known?.[encoding];
      if (known && tokens !== undefined) {
        counts.delete(text);
        counts.set(text, known);
        return tokens;
      }
      const counted = encode(text);
      if (known) {
        known[encoding] = counted;
        return counted;
      }
      if (text.length > options.maxTextChars || text.length > options.maxChars) return counted;
      counts.set(text, { [encoding]: counted });
      chars += text.length;
      while (counts.size > options.maxEntries || chars > options.maxChars) {
        const oldest = counts.keys().next();
        if (oldest.done) break;
        counts.delete(oldest.value);
        chars -= oldest.value.length;
      }
      return counted;
    },
    size: () => ({ entries: counts.size, chars }),
  };
}
