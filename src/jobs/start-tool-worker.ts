import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { AsyncToolDeps } from '../core/tools/run-async-tool';
import { createToolProcessor, failRun } from './tool-processor';
import { TOOLS_QUEUE, type ToolJobPayload } from './queue-names';

/**
 * The tools worker. A killed worker's job is found by stalled-job detection (`stalledIntervalMs`,
 * `lockDurationMs`) and run again elsewhere; a job that stalls more than twice fails, and its run is failed.
 */
export function startToolWorker(options: {
  connection: Redis;
  prefix: string;
  concurrency: number;
  deps: AsyncToolDeps;
  stalledIntervalMs: number;
  lockDurationMs: number;
}): Worker<ToolJobPayload> {
  const worker = new Worker<ToolJobPayload>(TOOLS_QUEUE, createToolProcessor(options.deps), {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    stalledInterval: options.stalledIntervalMs,
    lockDuration: options.lockDurationMs,
    maxStalledCount: 2,
  });
  worker.on('error', (error) => options.deps.log.warn({ err: error }, 'tools worker error'));
  worker.on('failed', (job, error) => {
    // Stalled too often: the processor never saw it, so fail the run here.
    if (job && /stalled/i.test(error.message)) void failRun(job.data.runId, error, options.deps);
  });
  return worker;
}
