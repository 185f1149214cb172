import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createMemoryRateLimiter, type RateDecision, type RateLimiter } from '../core/limits/rate-limiter';
import type { LogPort } from '../core/ports';

/**
 * A sliding-window log in a sorted set, atomically: drop what fell out of the window, refuse at the limit (with
 * the milliseconds until the oldest hit leaves), else record this hit. Times come from Redis' own clock, so every
 * process agrees on the window.
 */
const SLIDING_WINDOW = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local at = tonumber(oldest[2]) or now
  return {0, at + window - now}
end
if ARGV[3] == '1' then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
end
return {1, 0}`;

type WindowCommand = (
  key: string,
  limit: number,
  windowMs: number,
  count: '0' | '1',
  member: string,
) => Promise<[number, number]>;

/** Redis connections that know the sliding-window script (defined once per connection). */
const defined = new WeakSet<Redis>();

function windowCommand(redis: Redis): WindowCommand {
  if (!defined.has(redis)) {
    redis.defineCommand('chatRateWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
    defined.add(redis);
  }
  const command = (redis as unknown as { chatRateWindow: WindowCommand }).chatRateWindow.bind(redis);
  return command;
}

/**
 * One promise a connection for its next `ready`: every hit while Redis is being (re)connected waits on the same
 * one, so an outage adds one `ready` listener, not one a request (which were never removed).
 */
const nextReady = new WeakMap<Redis, Promise<void>>();

function whenReady(redis: Redis): Promise<void> {
  let ready = nextReady.get(redis);
  if (ready === undefined) {
    ready = new Promise<void>((resolve) => {
      redis.once('ready', () => {
        nextReady.delete(redis);
        resolve();
      });
    });
    nextReady.set(redis, ready);
  }
  return ready;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface SharedRateLimiterOptions {
  /** A request-path connection (no offline queue: commands fail fast while Redis is down). */
  redis: Redis;
  /** REDIS_PREFIX. */
  prefix: string;
  /** The limit's name in its keys (`<prefix>:rate:<name>:<key>`) and in the logs. */
  name: string;
  limit: number;
  /** Default a minute. */
  windowMs?: number;
  log: LogPort;
  /** How long a hit waits for Redis before this process decides alone. Default 500 ms. */
  timeoutMs?: number;
}

/**
 * A limit shared by every process through Redis. While Redis is unreachable each process enforces it alone, in
 * memory (the server runs degraded, never stops): one warning when that starts, one line when Redis is back.
 */
export function createSharedRateLimiter(options: SharedRateLimiterOptions): RateLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 500;
  limitNames.set(options.prefix, (limitNames.get(options.prefix) ?? new Set()).add(options.name));
  const fallback = createMemoryRateLimiter({ limit: options.limit, windowMs });
  const command = windowCommand(options.redis);
  let degraded = false;

  /** A connection still being opened (process start) is waited for, up to the timeout; a lost one is not. */
  async function connected(): Promise<void> {
    const { redis } = options;
    if (!['wait', 'connecting', 'connect'].includes(redis.status)) return;
    // Not ready in time: the command that follows fails too, and decide() falls back to memory with its one warning.
    // eslint-disable-next-line no-restricted-syntax -- reported by decide()'s fallback
    await withTimeout(whenReady(redis), timeoutMs * 4).catch(() => undefined);
  }

  async function decide(key: string, count: boolean): Promise<RateDecision> {
    try {
      await connected();
      const member = `${Date.now()}-${randomBytes(6).toString('hex')}`;
      const [allowed, retryAfterMs] = await withTimeout(
        command(`${options.prefix}:rate:${options.name}:${key}`, options.limit, windowMs, count ? '1' : '0', member),
        timeoutMs,
      );
      if (degraded) {
        degraded = false;
        options.log.info({ limit: options.name }, 'rate limit shared through Redis again');
      }
      return allowed === 1
        ? { allowed: true }
        : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) };
    } catch (error) {
      if (!degraded) {
        degraded = true;
        options.log.warn(
          { err: error, limit: options.name },
          'Redis unreachable: this rate limit is enforced per process until it is back',
        );
      }
      return count ? fallback.hit(key) : fallback.check(key);
    }
  }

  return { hit: (key) => decide(key, true), check: (key) => decide(key, false) };
}

/**
 * The names of the limits created in this process, by REDIS_PREFIX: every process composes the same limits, so an
 * erasure knows each key of a user (`<prefix>:rate:<name>:<key>`) without scanning the keyspace, also for a limit
 * added later (created through createSharedRateLimiter, it is listed here).
 */
const limitNames = new Map<string, Set<string>>();

/**
 * Deletes every rate-limit key of `key` (a user id) under `prefix`, of every limit created under that prefix: one
 * DEL of the exact keys (no SCAN, no KEYS). Returns how many existed.
 */
export async function deleteRateLimitKeys(input: { redis: Redis; prefix: string; key: string }): Promise<number> {
  const names = [...(limitNames.get(input.prefix) ?? [])];
  if (names.length === 0) return 0;
  return input.redis.del(...names.map((name) => `${input.prefix}:rate:${name}:${input.key}`));
}
