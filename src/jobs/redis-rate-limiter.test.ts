import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLog } from '../../test/fakes/summary-use-case-fakes';
import { createSharedRateLimiter, deleteRateLimitKeys } from './redis-rate-limiter';

/** A TCP server that accepts connections and never answers: Redis hanging, the client stuck before `ready`. */
async function silentServer(): Promise<{ server: Server; port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, sockets };
}

describe('createSharedRateLimiter while Redis is not ready', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('falls back to the per-process limit and keeps one ready listener however many hits wait', async () => {
    const { server, port, sockets } = await silentServer();
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    cleanups.push(() => sockets.forEach((socket) => socket.destroy()));
    const redis = new Redis({
      host: '127.0.0.1',
      port,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    });
    cleanups.push(() => redis.disconnect());
    redis.on('error', () => undefined);
    void redis.connect().catch(() => undefined);
    const before = redis.listenerCount('ready');
    const limiter = createSharedRateLimiter({
      redis,
      prefix: 'test',
      name: 'sends',
      limit: 3,
      log: silentLog,
      timeoutMs: 5,
    });

    const decisions = [];
    for (let hit = 0; hit < 5; hit += 1) decisions.push(await limiter.hit('user-1'));
    const afterFive = redis.listenerCount('ready');
    for (let hit = 5; hit < 40; hit += 1) decisions.push(await limiter.hit('user-1'));

    expect(['connecting', 'connect']).toContain(redis.status);
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(3);
    // ioredis keeps one of its own while connecting; the limiter adds at most one, not one a hit.
    expect(redis.listenerCount('ready')).toBe(afterFive);
    expect(redis.listenerCount('ready') - before).toBeLessThanOrEqual(2);
  });
});

describe('deleteRateLimitKeys', () => {
  it("deletes a user's key of every limit created under the prefix by name, without scanning the keyspace", async () => {
    const commands: string[][] = [];
    const fake = {
      status: 'ready',
      defineCommand: () => undefined,
      chatRateWindow: async () => [1, 0],
      scan: async () => {
        throw new Error('SCAN walks the whole keyspace');
      },
      keys: async () => {
        throw new Error('KEYS walks the whole keyspace');
      },
      del: async (...keys: string[]) => {
        commands.push(['DEL', ...keys]);
        return keys.length;
      },
    } as unknown as Redis;
    for (const name of ['send', 'search', 'added-later'])
      createSharedRateLimiter({ redis: fake, prefix: 'erase-test', name, limit: 5, log: silentLog });
    createSharedRateLimiter({ redis: fake, prefix: 'elsewhere', name: 'other', limit: 5, log: silentLog });
    await deleteRateLimitKeys({ redis: fake, prefix: 'erase-test', key: 'user:7' });
    expect(commands).toEqual([
      ['DEL', 'erase-test:rate:send:user:7', 'erase-test:rate:search:user:7', 'erase-test:rate:added-later:user:7'],
    ]);
  });
});
