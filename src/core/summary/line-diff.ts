/** One line of a line diff: kept in both texts, only in the new one, or only in the old one. */
export interface LineDiffOp {
  op: 'equal' | 'add' | 'remove';
  text: string;
}

/** Above this many cells (old lines × new lines) the LCS table is not built: the diff replaces the whole text. */
export const LINE_DIFF_MAX_CELLS = 4_000_000;

function splitLines(text: string): string[] {
  return text.length === 0 ? [] : text.split(/\r?\n/);
}

/** lengths[i][j] = LCS length of before[i..] and after[j..], as one flat row-major array. */
function lcsTable(before: readonly string[], after: readonly string[]): Uint32Array {
  const width = after.length + 1;
  const lengths = new Uint32Array((before.length + 1) * width);
  for (let i = before.length - 1; i >= 0; i -= 1) {
    for (let j = after.length - 1; j >= 0; j -= 1) {
      lengths[i * width + j] =
        before[i] === after[j]
          ? (lengths[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lengths[(i + 1) * width + j] ?? 0, lengths[i * width + j + 1] ?? 0);
    }
  }
  return lengths;
}

/**
 * A line diff from `before` to `after` by longest common subsequence: equal lines are kept in order, removals
 * come before additions at each change. Pure; O(lines²) time and memory, so texts whose table would exceed
 * LINE_DIFF_MAX_CELLS get a whole-text replacement (still a correct diff, just not a minimal one).
 */
export function lineDiff(before: string, after: string): LineDiffOp[] {
  const old = splitLines(before);
  const next = splitLines(after);
  if (old.length * next.length > LINE_DIFF_MAX_CELLS) {
    return [
      ...old.map((text) => ({ op: 'remove' as const, text })),
      ...next.map((text) => ({ op: 'add' as const, text })),
    ];
  }
  const width = next.length + 1;
  const lengths = lcsTable(old, next);
  const ops: LineDiffOp[] = [];
  let i = 0;
  let j = 0;
  while (i < old.length && j < next.length) {
    if (old[i] === next[j]) {
      ops.push({ op: 'equal', text: old[i] ?? '' });
      i += 1;
      j += 1;
    } else if ((lengths[(i + 1) * width + j] ?? 0) >= (lengths[i * width + j + 1] ?? 0)) {
      ops.push({ op: 'remove', text: old[i] ?? '' });
      i += 1;
    } else {
      ops.push({ op: 'add', text: next[j] ?? '' });
      j += 1;
    }
  }
  for (; i < old.length; i += 1) ops.push({ op: 'remove', text: old[i] ?? '' });
  for (; j < next.length; j += 1) ops.push({ op: 'add', text: next[j] ?? '' });
  return ops;
}

/** Counts of added and removed lines of a diff. */
export function diffStats(ops: readonly LineDiffOp[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const entry of ops) {
    if (entry.op === 'add') added += 1;
    if (entry.op === 'remove') removed += 1;
  }
  return { added, removed };
}
