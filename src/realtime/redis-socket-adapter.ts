import { createAdapter } from '@socket.io/redis-adapter';
import { Emitter } from '@socket.io/redis-emitter';
import { Redis } from 'ioredis';
import type { LogPort } from '../core/ports';
import type { RoomEmitter } from './forward-thread-events';

/** Commands whose promise the adapter and the emitter drop: they are caught here instead. */
const FIRE_AND_FORGET = new Set(['publish', 'subscribe', 'psubscribe', 'unsubscribe', 'punsubscribe']);

/**
 * The client with the fire-and-forget commands' rejections caught. The Redis adapter publishes every broadcast
 * without awaiting it; with Redis down that would be an unhandled rejection per event. Local delivery does
 * not depend on it (the adapter delivers to this process' sockets itself).
 */
function failSoft(client: Redis, onError: (error: unknown) => void): Redis {
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (typeof property === 'string' && FIRE_AND_FORGET.has(property)) {
        return (...args: unknown[]) => {
          const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
          if (result instanceof Promise)
            return result.catch((error: unknown) => {
              onError(error);
              return 0;
            });
          return result;
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

/** Logs a failing command at most every `everyMs` (a Redis outage fails one publish per streamed delta). */
function throttledWarning(log: LogPort, message: string, everyMs = 30_000): (error: unknown) => void {
  let lastAt = 0;
  let suppressed = 0;
  return (error) => {
    const now = Date.now();
    if (now - lastAt < everyMs) {
      suppressed += 1;
      return;
    }
    log.warn({ err: error, suppressed }, message);
    lastAt = now;
    suppressed = 0;
  };
}

/** The Redis key prefix of socket.io's channels: one per REDIS_PREFIX, so apps sharing a Redis stay apart. */
export function socketChannelKey(prefix: string): string {
  return `${prefix}-socket.io`;
}

/**
 * socket.io's Redis adapter on its own pub/sub connections. The publisher has no offline queue: with Redis down
 * an emit is delivered locally at once and not queued for other processes (they would get stale deltas later;
 * a tab there catches up with `message-end`, which carries the whole text, or a re-join).
 */
export function createRedisSocketAdapter(options: { url: string; prefix: string; log: LogPort }) {
  const { log } = options;
  const warn = throttledWarning(
    log,
    'socket.io redis adapter: publish failed; other server processes miss these events (local tabs still get them)',
  );
  // Closing, the adapter's last unsubscribes meet the closed connections: nothing is lost then, so nothing is said
  // (a Ctrl-C would otherwise end with this warning and its stack).
  let closing = false;
  const onError = (error: unknown) => {
    if (closing) log.debug({ err: error }, 'socket.io redis adapter: a command failed while closing');
    else warn(error);
  };
  const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2000);
  const publisher = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy,
  });
  // The subscriber re-subscribes by itself after a reconnect.
  const subscriber = new Redis(options.url, { maxRetriesPerRequest: null, retryStrategy });
  publisher.on('error', (error) => log.debug({ err: error }, 'socket.io redis publisher error'));
  subscriber.on('error', (error) => log.debug({ err: error }, 'socket.io redis subscriber error'));
  return {
    adapter: createAdapter(failSoft(publisher, onError), failSoft(subscriber, onError), {
      key: socketChannelKey(options.prefix),
    }),
    close() {
      closing = true;
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}

/**
 * For processes without a socket server (`worker` mode): emits to rooms through Redis, where the server
 * processes' adapters deliver to their sockets. Events emitted while Redis is down are dropped (logged).
 */
export function createRedisRoomEmitter(options: { url: string; prefix: string; log: LogPort }): {
  emitter: RoomEmitter;
  close(): void;
} {
  const { log } = options;
  const client = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  client.on('error', (error) => log.debug({ err: error }, 'socket.io redis emitter error'));
  const warn = throttledWarning(log, "socket.io redis emitter: publish failed; the servers' tabs miss these events");
  let closing = false;
  const onError = (error: unknown) => {
    if (closing) log.debug({ err: error }, 'socket.io redis emitter: a publish failed while closing');
    else warn(error);
  };
  const emitter = new Emitter(failSoft(client, onError), { key: socketChannelKey(options.prefix) });
  return {
    emitter: { to: (room) => ({ emit: (event, payload) => emitter.to(room).emit(event, payload) }) },
    close: () => {
      closing = true;
      client.disconnect();
    },
  };
}
