import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FoldQueue, ForgetRebuildQueue, IdleFoldQueue, RebuildQueue, TitleQueue } from '../core/ports';
import { createProducerQueue, withEnqueueTimeout } from './producer-queue';
import {
  FOLD_JOB,
  FORGET_REBUILD_JOB,
  IDLE_FOLD_JOB,
  REBUILD_JOB,
  SUMMARY_QUEUE,
  type SummaryJobPayload,
  TITLE_JOB,
} from './queue-names';

export interface FoldProducer extends FoldQueue, RebuildQueue, ForgetRebuildQueue, IdleFoldQueue, TitleQueue {
  queue: Queue<SummaryJobPayload>;
  close(): Promise<void>;
}

/** PROMPT_CACHE_TTL's default: five minutes, what OpenAI's and Anthropic's default caches keep a prefix. */
export const DEFAULT_IDLE_FOLD_DELAY_MS = 300_000;

/**
 * Enqueues folds deduplicated per thread: while a fold of the thread is waiting or running, another enqueue
 * is a no-op. (A fixed jobId would be ignored as long as a failed job with that id is kept, stopping the
 * thread's folds for good; ids must not contain ':'.)
 */
export function createFoldProducer(options: {
  connection: Redis;
  prefix: string;
  onError?: (error: Error) => void;
  idleFoldDelayMs?: number;
}): FoldProducer {
  const idleFoldDelayMs = options.idleFoldDelayMs ?? DEFAULT_IDLE_FOLD_DELAY_MS;
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
        queue.add(
          FORGET_REBUILD_JOB,
          { threadId, version },
          { deduplication: { id: `forget-rebuild-${threadId}-${version}` } },
        ),
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
    async scheduleIdleFold(threadId) {
      // Debounced: while the thread's idle fold is delayed, a new one only moves it to `idleFoldDelayMs` from now
      // (reschedule). Its own id, not the trigger fold's, so a waiting idle fold never swallows a trigger fold; a
      // deduplication id, not a jobId, so a finished or failed job kept for admins never blocks the next one.
      await withEnqueueTimeout(
        queue.add(
          IDLE_FOLD_JOB,
          { threadId },
          {
            delay: idleFoldDelayMs,
            deduplication: { id: `idle-fold-${threadId}`, reschedule: true },
            attempts: 2,
          },
        ),
      );
    },
    async enqueueTitle(threadId) {
      // Few attempts (the last one falls back to the first message's words); a deduplication id, not a jobId, so a
      // kept finished job never blocks a branch's or a retried first answer's title, which the job skips when titled.
      await withEnqueueTimeout(
        queue.add(TITLE_JOB, { threadId }, { deduplication: { id: `title-${threadId}` }, attempts: 3 }),
      );
    },
    close: () => queue.close(),
  };
}
