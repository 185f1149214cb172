import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FoldQueue, ForgetRebuildQueue, RebuildQueue } from '../core/ports';
import { createProducerQueue, withEnqueueTimeout } from './producer-queue';
import { FOLD_JOB, FORGET_REBUILD_JOB, REBUILD_JOB, SUMMARY_QUEUE, type SummaryJobPayload } from './queue-names';

export interface FoldProducer extends FoldQueue, RebuildQueue, ForgetRebuildQueue {
  queue: Queue<SummaryJobPayload>;
  close(): Promise<void>;
}

/**
 * Enqueues folds deduplicated per thread: while a fold of the thread is waiting or running, another enqueue
 * is a no-op. (A fixed jobId would be ignored as long as a failed job with that id is kept, stopping the
 * thread's folds for good; ids must not contain ':'.)
 */
export function createFoldProducer(options: { connection: Redis; prefix: string; onError?: (error: Error) => void }): FoldProducer {
  const queue = createProducerQueue<SummaryJobPayload>(SUMMARY_QUEUE, { ...options, attempts: 5 });
  return {
    queue,
    async enqueueFold(threadId, reason, force = false) {
      const job = await withEnqueueTimeout(
        queue.add(FOLD_JOB, { threadId, reason, force }, { deduplication: { id: `fold-${threadId}` } }),
      );
      return job.id ?? null;
    },
    async enqueueForgetRebuild({ threadId, version }) {
      // Deduplicated per withdrawal, not per thread: a rebuild already running may have read the forgotten text.
      const job = await withEnqueueTimeout(
        queue.add(FORGET_REBUILD_JOB, { threadId, version }, { deduplication: { id: `forget-rebuild-${threadId}-${version}` } }),
      );
      return job.id ?? null;
    },
    async enqueueRebuild({ threadId, actorId }) {
      // Few attempts: a rebuild is many summarizer calls, and an admin can ask again.
      const job = await withEnqueueTimeout(
        queue.add(REBUILD_JOB, { threadId, actorId }, { deduplication: { id: `rebuild-${threadId}` }, attempts: 2 }),
      );
      return job.id ?? null;
    },
    close: () => queue.close(),
  };
}
