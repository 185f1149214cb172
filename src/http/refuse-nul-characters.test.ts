import { describe, expect, it } from 'vitest';
import { hasNulEscape } from './refuse-nul-characters';

describe('hasNulEscape', () => {
  it('finds a NUL character escaped in a JSON string, wherever it stands', () => {
    for (const value of ['\u0000', 'a\u0000b', 'x'.repeat(10_000) + '\u0000', '\\\u0000'])
      expect(hasNulEscape(Buffer.from(JSON.stringify({ content: value }))), JSON.stringify(value)).toBe(true);
  });

  it('does not mistake an escaped backslash followed by the text u0000 for one', () => {
    for (const value of ['\\u0000', 'a\\u0000', '\\\\u0000', 'u0000', '\u0001'])
      expect(hasNulEscape(Buffer.from(JSON.stringify({ content: value }))), JSON.stringify(value)).toBe(false);
  });
});
