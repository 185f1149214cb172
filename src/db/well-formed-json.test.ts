import { describe, expect, it } from 'vitest';
import { wellFormedJson } from './well-formed-json';

describe('wellFormedJson', () => {
  it('replaces lone surrogates in strings and keys, at any depth, and keeps pairs and other values', () => {
    expect(wellFormedJson({ 'k\ud800': ['a\udc00b', { nested: '\ud83d\ude00 ok' }, 3, null, true] })).toEqual({
      'k\ufffd': ['a\ufffdb', { nested: '\ud83d\ude00 ok' }, 3, null, true],
    });
  });
});
