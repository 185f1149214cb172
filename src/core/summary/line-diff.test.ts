import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffStats, LINE_DIFF_MAX_CELLS, lineDiff, type LineDiffOp } from './line-diff';

function applyOld(ops: LineDiffOp[]): string[] {
  return ops.filter((entry) => entry.op !== 'add').map((entry) => entry.text);
}
function applyNew(ops: LineDiffOp[]): string[] {
  return ops.filter((entry) => entry.op !== 'remove').map((entry) => entry.text);
}

describe('lineDiff', () => {
  it('marks a changed line as a removal followed by an addition, keeping the lines around it', () => {
    expect(lineDiff('a\nb\nc', 'a\nB\nc')).toEqual([
      { op: 'equal', text: 'a' },
      { op: 'remove', text: 'b' },
      { op: 'add', text: 'B' },
      { op: 'equal', text: 'c' },
    ]);
  });

  it('treats an empty text as no lines', () => {
    expect(lineDiff('', 'x\ny')).toEqual([
      { op: 'add', text: 'x' },
      { op: 'add', text: 'y' },
    ]);
    expect(lineDiff('x', '')).toEqual([{ op: 'remove', text: 'x' }]);
    expect(lineDiff('', '')).toEqual([]);
  });

  it('keeps the longest common subsequence of lines', () => {
    const ops = lineDiff('1\n2\n3\n4\n5', '0\n2\n3\n5\n6');
    expect(ops.filter((entry) => entry.op === 'equal').map((entry) => entry.text)).toEqual(['2', '3', '5']);
    expect(diffStats(ops)).toEqual({ added: 2, removed: 2 });
  });

  it('ignores Windows line endings', () => {
    expect(lineDiff('a\r\nb', 'a\nb').every((entry) => entry.op === 'equal')).toBe(true);
  });

  it('replaces the whole text when the table would be too large', () => {
    const lines = Math.ceil(Math.sqrt(LINE_DIFF_MAX_CELLS)) + 1;
    const before = Array.from({ length: lines }, (_, index) => `line ${index}`).join('\n');
    const ops = lineDiff(before, `${before}\nextra`);
    expect(diffStats(ops)).toEqual({ added: lines + 1, removed: lines });
  });

  it('always reproduces both texts and is minimal for identical inputs (property)', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'c', 'd', ''), { maxLength: 12 }).map((lines) => lines.join('\n'));
    fc.assert(
      fc.property(text, text, (before, after) => {
        const ops = lineDiff(before, after);
        expect(applyOld(ops).join('\n')).toBe(before.length === 0 ? '' : before);
        expect(applyNew(ops).join('\n')).toBe(after.length === 0 ? '' : after);
        if (before === after) expect(diffStats(ops)).toEqual({ added: 0, removed: 0 });
      }),
    );
  });
});
