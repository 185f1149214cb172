import { describe, expect, it } from 'vitest';
import {
  checkJsonBody,
  hasNulEscape,
  hasObjectWiderThan,
  MAX_JSON_DEPTH,
  MAX_JSON_OBJECT_MEMBERS,
  nestsDeeperThan,
} from './json-body-checks';

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

describe('hasObjectWiderThan', () => {
  const wide = (members: number) =>
    `{${Array.from({ length: members }, (_, index) => `"k${index}":${index}`).join(',')}}`;

  it('counts the members directly inside each object, not those of arrays, nested objects or strings', () => {
    expect(hasObjectWiderThan(Buffer.from(wide(10)), 10)).toBe(false);
    expect(hasObjectWiderThan(Buffer.from(wide(11)), 10)).toBe(true);
    expect(hasObjectWiderThan(Buffer.from(`{"a":${wide(10)},"b":[${'1,'.repeat(50)}1]}`), 10)).toBe(false);
    expect(hasObjectWiderThan(Buffer.from(`{"a":[${wide(11)}]}`), 10)).toBe(true);
    expect(hasObjectWiderThan(Buffer.from(`{"a":"${',,,'.repeat(20)}","b":"\\",",c":1}`), 3)).toBe(false);
    expect(hasObjectWiderThan(Buffer.from('{}'), 0)).toBe(false);
  });

  it('refuses, before parsing, a body with an object wider than MAX_JSON_OBJECT_MEMBERS', () => {
    expect(() => checkJsonBody(Buffer.from(wide(MAX_JSON_OBJECT_MEMBERS)))).not.toThrow();
    expect(() => checkJsonBody(Buffer.from(wide(MAX_JSON_OBJECT_MEMBERS + 1)))).toThrow(/more than 10,000 members/);
  });
});
