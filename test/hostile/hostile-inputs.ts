/**
 * The worst shapes of client input, at a given size: text a person never writes but an attacker can send. Each is
 * one pre-tokenizer piece or a run of odd code points (the shapes that made counting quadratic), or what Postgres
 * and JSON parsers choke on.
 */

/** A deterministic generator (mulberry32), so a failing case is the same case again. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Random code points of every kind: lone surrogates, combining marks, controls, CJK, emoji, right-to-left. */
export function randomUnicode(length: number, seed = 1): string {
  const random = seeded(seed);
  const kinds: Array<() => string> = [
    () => String.fromCharCode(0xd800 + Math.floor(random() * 0x800)), // a lone surrogate, high or low
    () => String.fromCharCode(0x0300 + Math.floor(random() * 0x70)), // a combining mark
    () => String.fromCharCode(0x4e00 + Math.floor(random() * 0x5000)), // CJK
    () => String.fromCodePoint(0x1f300 + Math.floor(random() * 0x300)), // emoji (a surrogate pair)
    () => String.fromCharCode(0x0590 + Math.floor(random() * 0x100)), // Hebrew, Arabic
    () => String.fromCharCode(1 + Math.floor(random() * 31)), // a control character (not NUL)
    () => String.fromCharCode(0x20 + Math.floor(random() * 0x5f)), // ASCII
  ];
  let text = '';
  while (text.length < length) text += kinds[Math.floor(random() * kinds.length)]!();
  // Cut at `length` without leaving half of a surrogate pair that the loop made whole (a lone one is fine).
  return text.slice(0, length);
}

/** Text shapes of exactly `length` characters (UTF-16 code units). */
export function hostileTexts(length: number): Record<string, string> {
  return {
    'one repeated letter': 'a'.repeat(length),
    'one repeated underscore': '_'.repeat(length),
    'repeated punctuation': '!?.'.repeat(Math.ceil(length / 3)).slice(0, length),
    'random Unicode (lone surrogates, combining marks)': randomUnicode(length),
    'combining marks on one letter': `a${'\u0301'.repeat(length - 1)}`,
    'a NUL character': `before\u0000after ${'b'.repeat(Math.max(0, length - 13))}`.slice(0, length),
  };
}

/** JSON nested `depth` levels deep: `[[[...]]]` (2 bytes a level). */
export function deeplyNestedJson(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/** A JSON object with `keys` keys (about 12 bytes a key). */
export function veryWideJson(keys: number): string {
  const parts: string[] = [];
  for (let index = 0; index < keys; index += 1) parts.push(`"k${index}":${index}`);
  return `{${parts.join(',')}}`;
}
