/** One decision of a rate limiter: allowed, or refused with the seconds until the next hit is allowed. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * A sliding-window limit per key (sends per user, guest sessions per address, failed admin credentials per
 * address, ...). The shared implementation keeps its counts in Redis (src/jobs/redis-rate-limiter.ts).
 */
export interface RateLimiter {
  /** Counts one hit; `allowed: false` (nothing counted) when the key is at its limit. */
  hit(key: string): Promise<RateDecision>;
  /** Whether a hit now would be allowed, without counting one (e.g. a lockout after failed attempts). */
  check(key: string): Promise<RateDecision>;
}

/**
 * Sliding window over `windowMs` (default a minute), in this process' memory: each process enforces it on its own
 * share. The Redis limiter falls back to it while Redis is unreachable; socket event limits (per socket, which
 * lives in one process) use it directly.
 */
export function createMemoryRateLimiter(options: {
  limit: number;
  windowMs?: number;
  now?: () => number;
}): RateLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const hits = new Map<string, number[]>();
  let sweeps = 0;
  const decide = (key: string, count: boolean): RateDecision => {
    const at = now();
    const recent = (hits.get(key) ?? []).filter((time) => time > at - windowMs);
    if (recent.length >= options.limit) {
      hits.set(key, recent);
      const oldest = recent[0] ?? at;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest + windowMs - at) / 1000)) };
    }
    if (!count) return { allowed: true };
    recent.push(at);
    hits.set(key, recent);
    if (++sweeps % 1000 === 0) {
      for (const [other, times] of hits) if ((times.at(-1) ?? 0) <= at - windowMs) hits.delete(other);
    }
    return { allowed: true };
  };
  return {
    async hit(key) {
      return decide(key, true);
    },
    async check(key) {
      return decide(key, false);
    },
  };
}
