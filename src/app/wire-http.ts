import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { cancelToolRun } from '../core/tools';
import { createHttpApp } from '../http/create-http-app';
import type { HttpDeps } from '../http/http-deps';
import { metricsRoutes, observeRequests } from '../http/metrics-routes';
import { observeSocketServer, startMetricsServer } from '../observability';
import { createSocketServer, type SocketServer } from '../realtime/create-socket-server';
import { forwardThreadEvents } from '../realtime/forward-thread-events';
import { createRedisRoomEmitter } from '../realtime/redis-socket-adapter';
import type { Wiring } from './application';
import type { Limits } from './wire-limits';
import type { Observed } from './wire-stores';
import type { Tools } from './wire-tools';

/** The express app and its HTTP server, the socket.io server, the room emitter of a worker, the metrics listener. */
export interface Web {
  app: Express;
  server: Server;
  /** The socket.io server ('all' and 'serve' modes; null in 'worker' mode). */
  io: SocketServer | null;
  /** A worker's events (summary-updated) reach the servers' rooms through Redis ('worker' mode only). */
  roomEmitter: ReturnType<typeof createRedisRoomEmitter> | null;
  stopEmitting: (() => void) | null;
  /** The separate unauthenticated `/metrics` listener (METRICS_PORT), if any. */
  metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | null;
}

export interface WebParts {
  deps: HttpDeps;
  observed: Observed;
  tools: Tools;
  limits: Limits;
  /** Bound to the socket server here: the HTTP deps' eraseUser disconnects the user's sockets through it. */
  sockets: { server: SocketServer | null };
}

/** Step 8: the express app (metrics first), the HTTP server's timeouts, socket.io or the room emitter, /metrics. */
export async function wireHttp(wiring: Wiring, parts: WebParts): Promise<Web> {
  const { options, env, log, mode } = wiring;
  const { deps, observed } = parts;
  const { metrics, lifecycle } = observed;
  const app = createHttpApp(deps, {
    first: (express) => express.use(observeRequests({ metrics, closing: () => lifecycle.closing })),
    beforeApi: (express) =>
      express.use(
        metricsRoutes({
          registry: metrics.registry,
          token: env.METRICS_TOKEN ?? options.adminToken,
          failures: parts.limits.rateLimits.authFailures,
        }),
      ),
    ...(options.mountStatic ? { afterApi: options.mountStatic } : {}),
  });
  // A request (headers and body) must arrive whole within REQUEST_TIMEOUT_MS (checked every second); an answer may
  // stream for longer.
  const server = createServer(
    {
      requestTimeout: env.REQUEST_TIMEOUT_MS,
      headersTimeout: Math.min(env.REQUEST_TIMEOUT_MS, 60_000),
      connectionsCheckingInterval: 1000,
    },
    app,
  );
  const redisRealtime = { url: options.redisUrl, prefix: env.REDIS_PREFIX };
  const io = mode === 'worker' ? null : socketServerOf(wiring, parts, server);
  // A worker has no sockets: its events (summary-updated) reach the servers' rooms through Redis.
  const roomEmitter = mode === 'worker' ? createRedisRoomEmitter({ ...redisRealtime, log }) : null;
  const stopEmitting = roomEmitter
    ? forwardThreadEvents({ events: observed.events, emitter: roomEmitter.emitter, log }).stop
    : null;
  parts.sockets.server = io;
  if (io) {
    observeSocketServer(io.io, metrics);
    metrics.sources.activeSockets = () => io.connectedSockets;
  }
  const metricsServer =
    env.METRICS_PORT === undefined
      ? null
      : await startMetricsServer({ registry: metrics.registry, port: env.METRICS_PORT, host: env.METRICS_HOST });
  return { app, server, io, roomEmitter, stopEmitting, metricsServer };
}

/** The socket.io server on the HTTP server, with the HTTP deps and its own bounds. */
function socketServerOf({ options, env, log }: Wiring, { deps, observed, tools }: WebParts, server: Server) {
  const cancelRun = async (runId: string, userId: string) =>
    (await cancelToolRun({ runId, userId }, { runs: tools.toolRuns, queue: tools.toolQueue, log })) !== null;
  return createSocketServer({
    httpServer: server,
    deps: {
      ...deps,
      cancelToolRun: cancelRun,
      closing: () => observed.lifecycle.closing,
      limits: {
        ...deps.limits,
        socketEventsPerMinute: env.SOCKET_EVENTS_PER_MINUTE,
        maxSocketsPerUser: env.MAX_SOCKETS_PER_USER,
      },
    },
    redis: { url: options.redisUrl, prefix: env.REDIS_PREFIX },
    coalesceMs: env.SOCKET_DELTA_COALESCE_MS,
  });
}
