import { Redis, type RedisOptions } from 'ioredis';

/**
 * Producers on the request path fail fast when Redis is down (no offline queue, one try per command),
 * so a turn never hangs on an enqueue. Workers block on Redis and must retry forever.
 */
export function createProducerConnection(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    lazyConnect: false,
    ...options,
  });
}

export function createWorkerConnection(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    ...options,
  });
}

/** The readiness probe's Redis check: true when the connection answers PING (throws when it cannot send it). */
export async function pingRedis(connection: Redis): Promise<boolean> {
  return (await connection.ping()) === 'PONG';
}
