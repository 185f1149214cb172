import { createAdapter } from '@socket.io/redis-adapter';
import { Emitter } from '@socket.io/redis-emitter';
import { randomUUID } from 'node:crypto';
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

/** The channel on which the socket servers of one REDIS_PREFIX say they start and stop (not one of socket.io's). */
function serversChannel(prefix: string): string {
  return `${prefix}-socket-servers`;
}

/** How long a starting server waits for Redis to take its announcement before it listens anyway. */
const ANNOUNCE_WAIT_MS = 2000;
/** How long after a peer says goodbye the servers are counted again (its unsubscribe lands in the meantime). */
const RECOUNT_AFTER_BYE_MS = 500;

/**
 * Whether this socket server is the only one on its Redis prefix, so a broadcast need not be published for other
 * processes (a publish per streamed frame: 5 of a plain turn's 6 Redis commands, and a socket write each, measured in
 * bench/README.md). Alone only on proof: our own announcement, published once subscribed to the servers' channel,
 * reached exactly one subscriber (us). Another server's announcement ends it at once; it is made before that
 * server listens (SocketServer.announced), so no tab of it can be in a room before this one publishes again. Redis
 * down, or not known yet: not alone (every broadcast published, as without this). A peer's goodbye, and a
 * reconnect, count again.
 */
function trackPeers(publisher: Redis, subscriber: Redis, channel: string, log: LogPort) {
  const self = randomUUID();
  let alone = false;
  let stopped = false;
  let recount: NodeJS.Timeout | null = null;
  // Peer messages heard so far: a count answered while one arrived may predate that peer (its reply and the
  // peer's message come on different connections), so it proves nothing.
  let heard = 0;
  const announce = async (): Promise<void> => {
    try {
      await subscriber.subscribe(channel);
      const before = heard;
      const receivers = await publisher.publish(channel, `hello ${self}`);
      if (!stopped && heard === before) alone = receivers === 1;
    } catch (error) {
      alone = false;
      log.debug({ err: error }, 'socket servers: could not announce this one (broadcasts are published)');
    }
  };
  const countAgain = async (): Promise<void> => {
    try {
      const before = heard;
      const [, subscribers] = (await publisher.pubsub('NUMSUB', channel)) as [string, number];
      if (!stopped && heard === before) alone = Number(subscribers) === 1;
    } catch {
      alone = false;
    }
  };
  subscriber.on('message', (from: string, text: string) => {
    if (from !== channel || text.endsWith(` ${self}`)) return;
    heard += 1;
    alone = false;
    if (text.startsWith('bye ')) {
      if (recount) clearTimeout(recount);
      recount = setTimeout(() => void countAgain(), RECOUNT_AFTER_BYE_MS);
      recount.unref();
    }
  });
  let connectedOnce = false;
  subscriber.on('ready', () => {
    // ioredis subscribes again by itself after a reconnect; peers that started meanwhile missed our announcement.
    if (connectedOnce && !stopped) void announce();
    connectedOnce = true;
  });
  const announced = announce();
  return {
    alone: () => alone,
    /**
     * Resolves once this server announced itself, or failed to, or after ANNOUNCE_WAIT_MS with Redis unreachable
     * (then it publishes every broadcast, and announces itself when Redis is back).
     */
    announced: () =>
      Promise.race([announced, new Promise<void>((resolve) => setTimeout(resolve, ANNOUNCE_WAIT_MS).unref())]),
    async stop(): Promise<void> {
      stopped = true;
      alone = false;
      if (recount) clearTimeout(recount);
      await publisher.publish(channel, `bye ${self}`).catch(() => 0);
    },
  };
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
  const peers = trackPeers(publisher, subscriber, serversChannel(socketChannelKey(options.prefix)), log);
  return {
    adapter: createAdapter(failSoft(publisher, onError), failSoft(subscriber, onError), {
      key: socketChannelKey(options.prefix),
    }),
    /** True when no other socket server shares this Redis prefix: broadcasts may stay in this process. */
    alone: peers.alone,
    announced: peers.announced,
    async close() {
      closing = true;
      await peers.stop();
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
