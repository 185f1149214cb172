import type { Server as HttpServer } from 'node:http';
import { Server } from 'socket.io';
import type { z } from 'zod';
import { AppError } from '../core/errors/app-error';
import { acknowledged, type AtAck, type HandlerContext } from './acknowledged';
import { createMemoryRateLimiter, type RateLimiter } from '../core/limits/rate-limiter';
import { authenticateSocket } from './authenticate-socket';
import { connectionsPerUser } from './connections-per-user';
import { expireWithToken } from './expire-session';
import { forwardThreadEvents } from './forward-thread-events';
import { messageEdit } from './handlers/message-edit';
import { messageSend } from './handlers/message-send';
import { threadJoin } from './handlers/thread-join';
import { threadLeave } from './handlers/thread-leave';
import { toolCancel } from './handlers/tool-cancel';
import { turnCancel } from './handlers/turn-cancel';
import { maxHttpBufferSize } from './max-http-buffer-size';
import { createRedisSocketAdapter } from './redis-socket-adapter';
import type { SocketDeps } from './socket-deps';
import {
  messageEditPayload,
  messageSendPayload,
  threadJoinPayload,
  threadLeavePayload,
  toolCancelPayload,
  turnCancelPayload,
} from './socket-schemas';
import type { TypedServer, TypedSocket } from './socket-types';

export interface SocketServer {
  io: TypedServer;
  /** Sockets connected to this process (authenticated). */
  readonly connectedSockets: number;
  /** No other socket server shares this Redis prefix (or no Redis): thread events are not published to Redis. */
  readonly alone: boolean;
  /** Disconnects every socket, stops forwarding events and closes the Redis connections. */
  close(): Promise<void>;
  /** Disconnects every socket of a user, in every server process (the per-user room). */
  disconnectUser(userId: string): void;
  /**
   * Resolves once the other server processes on the same Redis know of this one (bounded): listen after it, so no
   * tab here misses a broadcast another process kept to itself while it believed itself alone.
   */
  announced(): Promise<void>;
}

export interface SocketServerOptions {
  httpServer: HttpServer;
  deps: SocketDeps;
  /** Several server processes: rooms and emits through Redis. Without it, this process only. */
  redis?: { url: string; prefix: string };
  /** How long a streaming message's deltas may wait to share a frame (forwardThreadEvents); default 50 ms. */
  coalesceMs?: number;
}

type Handler<S extends z.ZodType> = (context: HandlerContext<z.infer<S>>) => Promise<object | AtAck<object>>;

function registerHandlers(
  socket: TypedSocket,
  deps: SocketDeps,
  events: RateLimiter,
  flushEvents: (threadId: string) => void,
): void {
  const on = <S extends z.ZodType>(event: string, schema: S, run: Handler<S>) => {
    (socket.on as (event: string, listener: (...args: unknown[]) => void) => void)(
      event,
      acknowledged({ event, socket, schema, log: deps.log, run, limiter: events }),
    );
  };
  on('thread-join', threadJoinPayload, (context) => threadJoin({ ...deps, flushEvents }, context));
  on('thread-leave', threadLeavePayload, (context) => threadLeave(context));
  // New work is refused once the process is shutting down, like REST's 503: an accept committed while the socket
  // closes would lose its ack; refused, the client resends it (same clientMessageId) to the next process.
  const unlessClosing =
    <S extends z.ZodType>(run: Handler<S>): Handler<S> =>
    async (context) => {
      if (deps.closing?.()) throw new AppError('UNAVAILABLE', 'The server is restarting; send it again in a moment.');
      return run(context);
    };
  on(
    'message-send',
    messageSendPayload,
    unlessClosing((context) => messageSend(deps, context)),
  );
  on(
    'message-edit',
    messageEditPayload,
    unlessClosing((context) => messageEdit(deps, context)),
  );
  on('turn-cancel', turnCancelPayload, (context) => turnCancel(deps, context));
  on('tool-cancel', toolCancelPayload, (context) => toolCancel(deps, context));
}

/** The room every socket of a user joins. */
export function userRoom(userId: string): string {
  return `user:${userId}`;
}

/**
 * The socket.io server on the app's HTTP server (path `/socket.io`): JWT auth at connect, one handler per
 * client event, a room per thread, and this process' thread events forwarded to the rooms.
 * The protocol is documented in docs/realtime.md.
 */
export function createSocketServer(options: SocketServerOptions): SocketServer {
  const { httpServer, deps } = options;
  const redis = options.redis ? createRedisSocketAdapter({ ...options.redis, log: deps.log }) : null;
  const io: TypedServer = new Server(httpServer, {
    serveClient: false,
    maxHttpBufferSize: maxHttpBufferSize(deps.limits.maxMessageChars),
    ...(deps.corsOrigins.length > 0 ? { cors: { origin: deps.corsOrigins } } : {}),
    ...(redis ? { adapter: redis.adapter } : {}),
  });
  io.use(authenticateSocket(deps));
  io.use(connectionsPerUser(deps.limits.maxSocketsPerUser));
  // Every client event counts, per socket (a socket lives in one process, so memory is the right place).
  const eventLimiter = createMemoryRateLimiter({ limit: deps.limits.socketEventsPerMinute });
  const forwarding = forwardThreadEvents({
    events: deps.events,
    // Alone on the Redis prefix, a broadcast stays in this process: nobody else could deliver it.
    emitter: { to: (room) => (redis?.alone() ? io.local : io).to(room) },
    log: deps.log,
    ...(options.coalesceMs !== undefined ? { coalesceMs: options.coalesceMs } : {}),
  });
  io.on('connection', (socket) => {
    // The per-user room: an erasure disconnects every socket of the user, in every process, with one call.
    void socket.join(userRoom(socket.data.userId));
    expireWithToken(socket, deps.log);
    registerHandlers(socket, deps, eventLimiter, forwarding.flush);
    socket.on('error', (error) => deps.log.debug({ err: error, userId: socket.data.userId }, 'socket error'));
  });
  let closed: Promise<void> | null = null;
  return {
    io,
    get connectedSockets() {
      return io.of('/').sockets.size;
    },
    get alone() {
      return redis ? redis.alone() : true;
    },
    disconnectUser(userId) {
      io.in(userRoom(userId)).disconnectSockets(true);
    },
    announced: async () => redis?.announced(),
    close() {
      closed ??= (async () => {
        forwarding.stop();
        // Also closes the HTTP server when it is still listening; the caller may already have.
        await io.close();
        await redis?.close();
      })();
      return closed;
    },
  };
}
