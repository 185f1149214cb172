/**
 * Keys this process has already handled, to skip repeating work that would change nothing (a text already
 * inserted, a row already upserted). Bounded: at `max` keys it starts over empty, which only costs repeating that
 * work once per key.
 */
export interface RememberedKeys {
  has(key: string): boolean;
  add(key: string): void;
  readonly size: number;
}

export function createRememberedKeys(max: number): RememberedKeys {
  const keys = new Set<string>();
  return {
    has: (key) => keys.has(key),
    add(key) {
      if (keys.has(key)) return;
      if (keys.size >= max) keys.clear();
      keys.add(key);
    },
    get size() {
      return keys.size;
    },
  };
}
