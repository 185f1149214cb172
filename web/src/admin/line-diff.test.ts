import { describe, expect, it } from 'vitest';
import { lineDiff } from './line-diff';

describe('lineDiff', () => {
  it('keeps common lines and marks what was added and removed', () => {
    expect(lineDiff('a\nb\nc', 'a\nc\nd')).toEqual([
      { op: 'same', text: 'a' }, { op: 'removed', text: 'b' }, { op: 'same', text: 'c' }, { op: 'added', text: 'd' },
    ]);
  });
  it('treats a first revision as all added', () => {
    expect(lineDiff('', 'x\ny').map((line) => line.op)).toEqual(['added', 'added']);
  });
});
