import type { Worker } from 'bullmq';
import type { Logger } from './logger';
import type { Queues } from './wire-queues';
import type { Web } from './wire-http';
import type { Observed, Stores } from './wire-stores';
import type { Tools } from './wire-tools';
import type { Turns } from './wire-turns';
import type { Workers } from './wire-workers';

/** What the shutdown closes: every step's running parts. */
export interface RunningParts {
  log: Logger;
  stores: Stores;
  observed: Observed;
  queues: Queues;
  tools: Tools;
  turns: Turns;
  workers: Workers;
  web: Web;
}

/**
 * The graceful stop, in order: stop accepting (503s, no new turns), drain running turns and jobs side by side up to
 * `graceMs`, close the sockets (after the drain, so open tabs get the end of the answers), the HTTP server, the
 * Redis subscribers, the workers, the metrics listener, the MCP servers, the sweep in flight, the queues, the Redis
 * connections and the database pool.
 */
export async function stopApplication(parts: RunningParts, graceMs: number): Promise<void> {
  const { log, stores, observed, queues, tools, turns, workers, web } = parts;
  const { server, io } = web;
  // From here new requests get 503, kicks start nothing and queued turns stay queued for the next process.
  observed.lifecycle.closing = true;
  // A sweep in flight still uses the queues and the database: both close only after it (bounded below).
  const sweeping = workers.sweeper.stop();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // Running turns and jobs get the same grace period, side by side.
  await Promise.all([turns.runner.drainAll(graceMs), closeWorker(workers.worker, graceMs, log)]);
  // After the drain, so open tabs still get the end of the answers.
  await io?.close();
  web.stopEmitting?.();
  web.roomEmitter?.close();
  server.closeAllConnections();
  await closed;
  turns.kicks?.close();
  turns.cancels?.close();
  if (workers.worker) await closeWithin(log, 'summary worker', workers.worker.close());
  // Forced: a long tool run is not waited for; its job stalls and another worker runs it again (idempotent by run id).
  if (workers.toolWorker) await closeWithin(log, 'tools worker', workers.toolWorker.close(true));
  await web.metricsServer?.close();
  await tools.mcp?.close();
  observed.stopTiming();
  await closeWithin(log, 'sweeper', sweeping);
  await closeWithin(log, 'summary queue', queues.folds.close());
  await closeWithin(log, 'tools queue', tools.toolQueue.close());
  queues.producerConnection.disconnect();
  workers.workerConnection?.disconnect();
  workers.toolWorkerConnection?.disconnect();
  await stores.db.$disconnect();
}

/** Closing BullMQ objects waits on Redis: bounded, so a Redis outage cannot hang the shutdown. */
async function closeWithin(log: Logger, what: string, closing: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = await Promise.race([
    closing.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), 5000);
    }),
  ]);
  clearTimeout(timer);
  if (gaveUp) log.warn({ what }, 'gave up waiting for a queue or worker to close');
}

/**
 * Stops taking jobs and waits up to `graceMs` for the active ones. Past it they are left running until the
 * connections close: their locks expire and another worker takes them over (jobs are idempotent).
 */
async function closeWorker(worker: Worker | null, graceMs: number, log: Logger): Promise<void> {
  if (!worker) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), graceMs);
  });
  const closing = worker.close().then(
    () => 'closed' as const,
    (error: unknown) => {
      log.warn({ err: error }, 'error closing the worker');
      return 'closed' as const;
    },
  );
  if ((await Promise.race([closing, timeout])) === 'timeout')
    log.warn(
      { graceMs },
      'jobs still running after the grace period: they return to the queue when their lock expires',
    );
  clearTimeout(timer);
}
