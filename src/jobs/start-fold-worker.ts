import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { createFoldProcessor, type SummaryJobDeps } from './fold-processor';
import { SUMMARY_QUEUE, type SummaryJobPayload } from './queue-names';

/** The summary worker. Stalled-job detection is tunable so a killed worker's job is picked up quickly in tests. */
export function startFoldWorker(options: {
  connection: Redis;
  prefix: string;
  concurrency: number;
  deps: SummaryJobDeps;
  stalledIntervalMs?: number;
  lockDurationMs?: number;
}): Worker<SummaryJobPayload> {
  const worker = new Worker<SummaryJobPayload>(SUMMARY_QUEUE, createFoldProcessor(options.deps), {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    lockDuration: options.lockDurationMs ?? 30_000,
    maxStalledCount: 2,
  });
  worker.on('error', (error) => options.deps.log.warn({ err: error }, 'summary worker error'));
  return worker;
}
