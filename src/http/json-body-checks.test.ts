import { describe, expect, it } from 'vitest';
import { checkJsonBody, hasNulEscape, MAX_JSON_DEPTH, nestsDeeperThan } from './json-body-checks';

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

describe('nestsDeeperThan', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('finds arrays and objects nested past the bound, and nothing at it', () => {
    expect(nestsDeeperThan(Buffer.from(nested(10)), 10)).toBe(false);
    expect(nestsDeeperThan(Buffer.from(nested(11)), 10)).toBe(true);
    expect(nestsDeeperThan(Buffer.from(`${'{"a":'.repeat(11)}1${'}'.repeat(11)}`), 10)).toBe(true);
    // Wide is not deep: siblings close what they open.
    expect(nestsDeeperThan(Buffer.from(`[${Array.from({ length: 1000 }, () => '[{}]').join(',')}]`), 3)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ content: `${'['.repeat(500)}"\\"${'{'.repeat(500)}` });
    expect(nestsDeeperThan(Buffer.from(text), 2)).toBe(false);
  });

  it("lets a /v1 request's tool schemas through and refuses a body of nothing but brackets", () => {
    const schema = { type: 'object', properties: { a: { type: 'array', items: { type: 'object', properties: {} } } } };
    expect(() =>
      checkJsonBody(Buffer.from(JSON.stringify({ tools: [{ function: { parameters: schema } }] }))),
    ).not.toThrow();
    expect(() => checkJsonBody(Buffer.from(nested(MAX_JSON_DEPTH + 1)))).toThrow(/nests deeper/);
  });
});
