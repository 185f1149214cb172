import { describe, expect, it } from 'vitest';
import { findStaleCounts } from './find-stale-counts';
import { entry } from './test-fixtures';

describe('findStaleCounts', () => {
  it('lists entries counted with another or an unrecorded encoding', () => {
    const entries = [
      entry(1, 'user', 5, { tokenEncoding: 'o200k_base' }),
      entry(2, 'user', 5, { tokenEncoding: 'cl100k_base' }),
      entry(3, 'user', 5),
    ];
    expect(findStaleCounts(entries, 'o200k_base')).toEqual([2, 3]);
    expect(findStaleCounts(entries, 'cl100k_base')).toEqual([1, 3]);
    expect(findStaleCounts([], 'o200k_base')).toEqual([]);
  });
});
