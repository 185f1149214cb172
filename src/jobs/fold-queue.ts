import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FoldQueue, RebuildQueue } from '../core/ports';
import { FOLD_JOB, REBUILD_JOB, SUMMARY_QUEUE, type SummaryJobPayload } from './queue-names';

export interface FoldProducer extends FoldQueue, RebuildQueue {
  queue: Queue<SummaryJobPayload>;
  close(): Promise<void>;
}

/** Times out an enqueue that Redis does not answer (a dead connection must not hang a turn). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Enqueues folds deduplicated per thread: while a fold of the thread is waiting or running, another enqueue
 * is a no-op. (A fixed jobId would be ignored as long as a failed job with that id is kept, stopping the
 * thread's folds for good; ids must not contain ':'.)
 */
export function createFoldProducer(options: { connection: Redis; prefix: string; onError?: (error: Error) => void }): FoldProducer {
  const queue = new Queue<SummaryJobPayload>(SUMMARY_QUEUE, {
    connection: options.connection,
    prefix: options.prefix,
    defaultJobOptions: {
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
  // Redis outages surface here; the producer stays usable and reconnects by itself.
  queue.on('error', (error) => options.onError?.(error));
  return {
    queue,
    async enqueueFold(threadId, reason, force = false) {
      const job = await withTimeout(
        queue.add(FOLD_JOB, { threadId, reason, force }, { deduplication: { id: `fold-${threadId}` } }),
        2000,
      );
      return job.id ?? null;
    },
    async enqueueRebuild({ threadId, actorId }) {
      // Few attempts: a rebuild is many summarizer calls, and an admin can ask again.
      const job = await withTimeout(
        queue.add(REBUILD_JOB, { threadId, actorId }, { deduplication: { id: `rebuild-${threadId}` }, attempts: 2 }),
        2000,
      );
      return job.id ?? null;
    },
    close: () => queue.close(),
  };
}
