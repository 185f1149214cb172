import { describe, expect, it } from 'vitest';
import { compactionItem, compactionKey, compactionOfToken, compactionTokenOf } from './compaction-token';
import { responseIdKey } from './response-ids';

const secret = 'an-auth-secret-of-at-least-thirty-two-characters';
const key = compactionKey(secret);
const compaction = { threadId: '0b7f6a2e-3c1d-4e5f-8a9b-0c1d2e3f4a5b', revision: 3, atSeq: 42 };

describe('compaction tokens', () => {
  it('name a thread, a summary revision and a seq for the user they were given to, and for no one else', () => {
    const token = compactionTokenOf(key, 'user-a', compaction);
    expect(compactionOfToken(key, 'user-a', token)).toEqual(compaction);
    expect(compactionOfToken(key, 'user-b', token)).toBeNull();
    expect(compactionOfToken(compactionKey('another-secret-of-at-least-thirty-two-chars'), 'user-a', token)).toBeNull();
  });

  it('are signed with a key of their own (not the response ids’)', () => {
    expect(compactionKey(secret).equals(responseIdKey(secret))).toBe(false);
  });

  it('refuse a tampered or malformed token', () => {
    const token = compactionTokenOf(key, 'user-a', compaction);
    const tampered = [
      token.replace('.3.42.', '.4.42.'),
      token.replace('.3.42.', '.3.41.'),
      token.replace('0b7f6a2e', '0b7f6a2f'),
      `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`,
      token.slice(0, -2),
      `${token}.x`,
      token.replace('scc1', 'scc2'),
      '',
      'x'.repeat(500),
    ];
    for (const each of tampered) expect(compactionOfToken(key, 'user-a', each)).toBeNull();
  });

  it('are carried by a compaction item with a cmp_ id', () => {
    const item = compactionItem(key, 'user-a', compaction);
    expect(item.type).toBe('compaction');
    expect(item.id).toMatch(/^cmp_[0-9a-f]{40}$/);
    expect(compactionOfToken(key, 'user-a', item.encrypted_content)).toEqual(compaction);
  });
});
