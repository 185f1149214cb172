import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Worker } from 'bullmq';
import type { Env } from '../config/env';
import type { ContextSettings } from '../core/thread-context/context-settings';
import type { ChatModelPort, SummarizerPort } from '../core/ports';
import type { Tool } from '../core/tools';
import type { TurnRunner } from '../core/turn/turn-runner';
import type { SpendGate } from '../core/spend-gate/spend-gate';
import type { Database } from '../db/prisma-client';
import type { HttpDeps } from '../http/http-deps';
import type { FoldProducer } from '../jobs/fold-queue';
import type { BullQueueRegistry } from '../jobs/queue-registry';
import type { Sweeper } from '../jobs/sweeper';
import type { ToolProducer } from '../jobs/tool-queue';
import type { McpHub } from '../mcp';
import type { Metrics } from '../observability';
import type { SocketServer } from '../realtime/create-socket-server';
import type { Logger } from './logger';

export type ProcessMode = 'all' | 'serve' | 'worker';

export interface ApplicationOptions {
  env: Env;
  databaseUrl: string;
  redisUrl: string;
  authSecret: string;
  adminToken: string;
  log: Logger;
  mode: ProcessMode;
  /** Test and benchmark knobs; production uses the defaults. */
  tuning?: {
    sweepIntervalMs?: number;
    stalledIntervalMs?: number;
    lockDurationMs?: number;
    retryBaseMs?: number;
    leaseTtlMs?: number;
    chat?: ChatModelPort;
    summarizer?: SummarizerPort;
    /** Tools added to the deployment's (src/tools/index.ts), e.g. test tools. */
    extraTools?: Tool[];
    /** How often a running tool polls its cancel flag. Default 500 ms. */
    toolCancelPollMs?: number;
    /** First restart delay of a crashed MCP server (default 500 ms). */
    mcpBackoffMs?: number;
    /** Node.js process metrics on /metrics (default true; tests with many apps turn them off). */
    defaultMetrics?: boolean;
    /** The clock of spend periods (tests move it across a reset). Default: the system clock. */
    now?: () => Date;
  };
  /** Serves the browser app (added by the web part). */
  mountStatic?: (app: Express) => void;
}

export interface Application {
  app: Express;
  server: Server;
  db: Database;
  runner: TurnRunner;
  sweeper: Sweeper;
  /** Spend limits (SPEND_LIMITS=on), else undefined. */
  spend: SpendGate | undefined;
  folds: FoldProducer;
  toolQueue: ToolProducer;
  worker: Worker | null;
  toolWorker: Worker | null;
  deps: HttpDeps;
  /** Prometheus metrics of this process (`/metrics`). */
  metrics: Metrics;
  /** The port of the separate unauthenticated `/metrics` listener (METRICS_PORT), if any. */
  metricsPort: number | null;
  /** The socket.io server ('all' and 'serve' modes; null in 'worker' mode). `io.connectedSockets` counts sockets. */
  io: SocketServer | null;
  /** The MCP servers of this process (null when MCP_SERVERS is unset). */
  mcp: McpHub | null;
  /** Queues shown to admins (GET /api/admin/queues, /admin/jobs); other parts register theirs here. */
  queues: BullQueueRegistry;
  /** Listens on `port` (0 = any); resolves with the bound port. */
  listen(port: number, host?: string): Promise<number>;
  /** Graceful stop: stop accepting, drain turns up to the grace period, close workers, queues and pools. */
  stop(graceMs?: number): Promise<void>;
}

/** What every step of the composition reads: the options, their parts named, and the context settings. */
export interface Wiring {
  options: ApplicationOptions;
  env: Env;
  log: Logger;
  mode: ProcessMode;
  tuning: NonNullable<ApplicationOptions['tuning']>;
  settings: ContextSettings;
}
