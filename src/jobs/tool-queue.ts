import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ToolQueue } from '../core/ports';
import { TOOLS_QUEUE, type ToolJobPayload } from './queue-names';

export interface ToolProducer extends ToolQueue {
  queue: Queue<ToolJobPayload>;
  close(): Promise<void>;
}

/** Attempts of a tool job: a worker that dies mid-run counts as a stall, not an attempt (see the worker). */
export const TOOL_JOB_ATTEMPTS = 3;

/**
 * Enqueues tool runs, deduplicated per run while a job of it waits or runs (the sweeper may enqueue a run again;
 * that is a no-op then). A dead Redis makes the enqueue fail fast; the run row stays `queued` for the sweeper.
 */
export function createToolProducer(options: { connection: Redis; prefix: string; onError?: (error: Error) => void }): ToolProducer {
  const queue = new Queue<ToolJobPayload>(TOOLS_QUEUE, {
    connection: options.connection,
    prefix: options.prefix,
    defaultJobOptions: {
      attempts: TOOL_JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
  queue.on('error', (error) => options.onError?.(error));
  return {
    queue,
    async enqueueToolRun(runId) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('Redis did not answer within 2000 ms')), 2000); });
      try {
        await Promise.race([queue.add('run', { runId }, { deduplication: { id: `run-${runId}` } }), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => queue.close(),
  };
}
