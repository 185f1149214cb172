/** Sends per user per minute, shared by REST and sockets. */
export interface RateLimiter {
  /** Counts one hit; `allowed: false` with the seconds until the next one is allowed. */
  hit(key: string): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }>;
}

/**
 * Sliding window over the last minute, in this process' memory.
 * (Several server processes each enforce it on their own share; see docs/scaling.md.)
 */
export function createMemoryRateLimiter(options: { limit: number; windowMs?: number; now?: () => number }): RateLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const hits = new Map<string, number[]>();
  let sweeps = 0;
  return {
    async hit(key) {
      const at = now();
      const recent = (hits.get(key) ?? []).filter((time) => time > at - windowMs);
      if (recent.length >= options.limit) {
        hits.set(key, recent);
        const oldest = recent[0] ?? at;
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest + windowMs - at) / 1000)) };
      }
      recent.push(at);
      hits.set(key, recent);
      if (++sweeps % 1000 === 0) {
        for (const [other, times] of hits) if ((times.at(-1) ?? 0) <= at - windowMs) hits.delete(other);
      }
      return { allowed: true };
    },
  };
}
