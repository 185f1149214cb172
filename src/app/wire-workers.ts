import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ThreadStore } from '../core/ports';
import type { SpendGate } from '../core/spend-gate/spend-gate';
import { createWorkerConnection } from '../jobs/redis-connections';
import { removeJobsOf } from '../jobs/remove-jobs-of';
import { startFoldWorker } from '../jobs/start-fold-worker';
import { startToolWorker } from '../jobs/start-tool-worker';
import { createSweeper, type Sweeper } from '../jobs/sweeper';
import { observeWorker } from '../observability';
import type { Wiring } from './application';
import type { Queues } from './wire-queues';
import type { Observed, Stores } from './wire-stores';
import type { Tools } from './wire-tools';
import type { Turns } from './wire-turns';

/** The job workers of this process ('all' and 'worker' modes; null in 'serve' mode) and the sweeper. */
export interface Workers {
  /** The summary queue's worker (folds, titles). */
  worker: Worker | null;
  toolWorker: Worker | null;
  workerConnection: Redis | null;
  toolWorkerConnection: Redis | null;
  sweeper: Sweeper;
}

export interface WorkerParts {
  stores: Stores;
  observed: Observed;
  spend: SpendGate | undefined;
  queues: Queues;
  tools: Tools;
  turns: Turns;
  /** Erases a guest past GUEST_MAX_AGE (the HTTP step's eraseUser, bound later). */
  eraseGuest: (userId: string) => Promise<unknown>;
}

/** Step 6: the fold and tool workers on their own blocking connections, then the sweeper (started by listen). */
export function wireWorkers(wiring: Wiring, parts: WorkerParts): Workers {
  const { options, env, log, mode, tuning } = wiring;
  const { stores, spend, queues } = parts;
  let worker: Worker | null = null;
  let toolWorker: Worker | null = null;
  let workerConnection: Redis | null = null;
  let toolWorkerConnection: Redis | null = null;
  if (mode !== 'serve') {
    workerConnection = createWorkerConnection(options.redisUrl);
    workerConnection.on('error', (error) => log.debug({ err: error }, 'redis worker connection error'));
    worker = startFoldWorker({
      connection: workerConnection,
      prefix: env.REDIS_PREFIX,
      concurrency: env.WORKER_CONCURRENCY,
      deps: {
        ...queues.foldDeps,
        transcript: stores.transcript,
        threads: stores.threads,
        idleFold: queues.idleFold,
        title: queues.titleDeps,
        ...(spend ? { foldDeferredUntil: (threadId: string) => foldDeferral(stores.threads, spend, threadId) } : {}),
      },
      stalledIntervalMs: tuning.stalledIntervalMs ?? env.WORKER_STALLED_INTERVAL_MS,
      lockDurationMs: tuning.lockDurationMs ?? env.WORKER_LOCK_MS,
    });
    toolWorkerConnection = createWorkerConnection(options.redisUrl);
    toolWorkerConnection.on('error', (error) => log.debug({ err: error }, 'redis tools worker connection error'));
    toolWorker = startToolWorker({
      connection: toolWorkerConnection,
      prefix: env.REDIS_PREFIX,
      concurrency: env.WORKER_CONCURRENCY,
      deps: parts.turns.asyncToolDeps,
      stalledIntervalMs: tuning.stalledIntervalMs ?? env.WORKER_STALLED_INTERVAL_MS,
      lockDurationMs: tuning.lockDurationMs ?? env.WORKER_LOCK_MS,
    });
    observeWorker(worker, parts.observed.metrics, { lag: 'fold' });
  }
  const sweeper = sweeperOf(wiring, parts);
  return { worker, toolWorker, workerConnection, toolWorkerConnection, sweeper };
}

/** The sweeper: stranded turns and tool runs, lost folds and rebuilds, stale spend holds, retention. */
function sweeperOf({ env, log, mode, tuning, settings }: Wiring, parts: WorkerParts): Sweeper {
  const { stores, spend, queues, tools } = parts;
  const { folds } = queues;
  const { erasures } = stores;
  const { runner } = parts.turns;
  return createSweeper({
    turns: stores.turns,
    summaries: stores.summaries,
    folds,
    settings,
    log,
    rebuilds: { memory: stores.memory, queue: folds },
    toolRuns: { runs: tools.toolRuns, queue: tools.toolQueue, olderThanMs: 5000 },
    ...(mode !== 'worker' ? { resumeTurns: (threadId: string) => void runner.kick(threadId) } : {}),
    interruptedTurns: env.RESUME_INTERRUPTED_TURNS,
    ...(spend ? { releaseSpend: () => spend.releaseStale() } : {}),
    intervalMs: tuning.sweepIntervalMs ?? env.SWEEP_INTERVAL_MS,
    retention: {
      retentionDays: env.RETENTION_DAYS,
      guestMaxAgeSeconds: env.GUEST_MAX_AGE,
      deleteIdleThreads: (before, limit) => erasures.deleteIdleThreads(before, limit),
      removeJobs: (refs) => removeJobsOf({ queues: [folds.queue as Queue, tools.toolQueue.queue as Queue], ...refs }),
      guestsCreatedBefore: (before, limit) => erasures.guestsCreatedBefore(before, limit),
      eraseGuest: (userId) => parts.eraseGuest(userId),
    },
  });
}

/** When a fold of the thread waits for its owner's spend limit reset (null: run it now; a deleted thread: now, it ends). */
async function foldDeferral(threads: ThreadStore, spend: SpendGate, threadId: string): Promise<Date | null> {
  const thread = await threads.findThread(threadId, null);
  return thread ? spend.foldDeferredUntil(thread.ownerId) : null;
}
