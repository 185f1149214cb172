import { describe, expect, it } from 'vitest';
import { createRememberedKeys } from './remembered-keys';

describe('createRememberedKeys', () => {
  it('remembers the keys added', () => {
    const keys = createRememberedKeys(10);
    keys.add('a');
    keys.add('a');
    expect(keys.has('a')).toBe(true);
    expect(keys.has('b')).toBe(false);
    expect(keys.size).toBe(1);
  });

  it('never holds more than max keys, however many distinct keys come', () => {
    const keys = createRememberedKeys(64);
    for (let index = 0; index < 10_000; index += 1) {
      keys.add(`prefix-${index}`);
      expect(keys.size).toBeLessThanOrEqual(64);
    }
    // The latest key is always remembered (the set starts over before adding it).
    expect(keys.has('prefix-9999')).toBe(true);
  });
});
