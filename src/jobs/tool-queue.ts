import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ToolQueue } from '../core/ports';
import { createProducerQueue, withEnqueueTimeout } from './producer-queue';
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
export function createToolProducer(options: {
  connection: Redis;
  prefix: string;
  onError?: (error: Error) => void;
}): ToolProducer {
  const queue = createProducerQueue<ToolJobPayload>(TOOLS_QUEUE, { ...options, attempts: TOOL_JOB_ATTEMPTS });
  return {
    queue,
    async enqueueToolRun(runId) {
      await withEnqueueTimeout(queue.add('run', { runId }, { deduplication: { id: `run-${runId}` } }));
    },
    async enqueuePoll(runId, delayMs) {
      // Not deduplicated: the poll that enqueues the next one is still active. Polls claim their turn in Postgres.
      await withEnqueueTimeout(queue.add('poll', { runId }, { delay: delayMs }));
    },
    close: () => queue.close(),
  };
}
