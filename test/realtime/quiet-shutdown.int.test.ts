import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Server } from 'socket.io';
import { describe, expect, inject, it } from 'vitest';
import { createRedisSocketAdapter } from '../../src/realtime/redis-socket-adapter';

function recordingLog() {
  const warnings: string[] = [];
  const log = {
    info: () => undefined,
    debug: () => undefined,
    error: (_fields: unknown, message?: string) => warnings.push(String(message)),
    warn: (_fields: unknown, message?: string) => warnings.push(String(message)),
  };
  return { log, warnings };
}

describe('closing the socket server on Redis', () => {
  it('says nothing about events emitted once it is closing: a Ctrl-C ends without a warning and its stack', async () => {
    const { log, warnings } = recordingLog();
    const redis = createRedisSocketAdapter({
      url: inject('redisUrl'),
      prefix: `q${randomBytes(4).toString('hex')}`,
      log,
    });
    const httpServer = createServer();
    const io = new Server(httpServer, { adapter: redis.adapter });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', () => resolve()));
    // Connected (the publisher queues nothing while it connects), then a room broadcast, as a running app does.
    await new Promise((resolve) => setTimeout(resolve, 300));
    io.to('room-a').emit('hello', 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(warnings).toEqual([]);
    await io.close();
    await redis.close();
    // A turn's last events may still be forwarded as the process stops: nobody is left to miss them.
    io.to('room-a').emit('hello', 2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(warnings).toEqual([]);
  });
});
