/**
 * A JSON value whose strings are well-formed UTF-16: each lone surrogate becomes U+FFFD. Postgres' jsonb refuses a
 * lone surrogate escape (`"\ud800"`), which JSON.parse lets through from any client body; text columns get U+FFFD
 * from the driver's UTF-8 encoding anyway, so jsonb columns that hold client text go through this.
 */
export function wellFormedJson<T>(value: T): T {
  if (typeof value === 'string') return wellFormed(value) as T;
  if (Array.isArray(value)) return value.map((item) => wellFormedJson(item)) as T;
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[wellFormed(key)] = wellFormedJson(item);
    return copy as T;
  }
  return value;
}

// String.prototype.toWellFormed (Node 20+); the project's TypeScript lib (ES2023) does not declare it yet.
function wellFormed(text: string): string {
  return (text as string & { toWellFormed(): string }).toWellFormed();
}
