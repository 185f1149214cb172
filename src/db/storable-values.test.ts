import { describe, expect, it } from 'vitest';
import { jsonParameter } from './sql-columns';
import { storableJson, storableText } from './storable-values';

describe('storableJson', () => {
  it('replaces lone surrogates and NUL in strings and keys, at any depth, and keeps pairs and other values', () => {
    const when = new Date(0);
    expect(
      storableJson({
        'k\ud800': ['a\udc00b', { nested: '\ud83d\ude00 ok', 'n\u0000': 'x\u0000y' }, 3, null, true, when],
      }),
    ).toEqual({
      'k\ufffd': ['a\ufffdb', { nested: '\ud83d\ude00 ok', 'n\ufffd': 'x\ufffdy' }, 3, null, true, when],
    });
  });
});

describe('storableText', () => {
  it('keeps ordinary text as it is and makes NUL and lone surrogates visible replacement characters', () => {
    expect(storableText('plain café 😀')).toBe('plain café 😀');
    expect(storableText('before\u0000after\ud800')).toBe('before\ufffdafter\ufffd');
  });
});

describe('jsonParameter', () => {
  it('stores NUL and lone surrogates as U+FFFD, and any other value exactly as JSON.stringify writes it', () => {
    expect(JSON.parse(jsonParameter({ args: { text: 'a\u0000b\ud800', ok: '😀' } })!)).toEqual({
      args: { text: 'a\ufffdb\ufffd', ok: '😀' },
    });
    const plain = { name: 'lookup', args: { path: 'C:\\u0000dir', n: 3 } };
    expect(jsonParameter(plain)).toBe(JSON.stringify(plain));
    expect(jsonParameter(null)).toBeNull();
  });
});
