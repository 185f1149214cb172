export interface DiffLine {
  op: 'same' | 'added' | 'removed';
  text: string;
}

/** A line diff by longest common subsequence (summaries are short: a few hundred lines at most). */
export function lineDiff(before: string, after: string): DiffLine[] {
  const old = before ? before.split('\n') : [];
  const next = after ? after.split('\n') : [];
  if (old.length * next.length > 1_000_000) return [...old.map((text) => ({ op: 'removed' as const, text })), ...next.map((text) => ({ op: 'added' as const, text }))];
  const width = next.length + 1;
  const table = new Uint32Array((old.length + 1) * width);
  for (let i = old.length - 1; i >= 0; i -= 1) {
    for (let j = next.length - 1; j >= 0; j -= 1) {
      table[i * width + j] = old[i] === next[j] ? table[(i + 1) * width + j + 1]! + 1 : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < old.length || j < next.length) {
    if (i < old.length && j < next.length && old[i] === next[j]) {
      lines.push({ op: 'same', text: old[i]! });
      i += 1;
      j += 1;
    } else if (j < next.length && (i >= old.length || table[i * width + j + 1]! >= table[(i + 1) * width + j]!)) {
      lines.push({ op: 'added', text: next[j]! });
      j += 1;
    } else {
      lines.push({ op: 'removed', text: old[i]! });
      i += 1;
    }
  }
  return lines;
}
