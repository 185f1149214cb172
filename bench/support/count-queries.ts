import pg from 'pg';

/**
 * Counts the statements this process sends through node-postgres (Prisma's adapter and the hot path's pool both
 * go through pg.Client#query), by their text: how many round trips a turn makes. Installed only when asked.
 */
export function countQueries(): { reset(): void; perTurn(turns: number): string } {
  const counts = new Map<string, number>();
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function query(this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '?');
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 120);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return original.apply(this, args);
  };
  return {
    reset: () => counts.clear(),
    perTurn: (turns) =>
      [...counts]
        .sort((a, b) => b[1] - a[1])
        .map(([text, count]) => `${(count / Math.max(1, turns)).toFixed(2).padStart(6)}  ${text}`)
        .join('\n'),
  };
}
