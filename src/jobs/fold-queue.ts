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

/** Threads whose last idle-fold push-back this process remembers (oldest forgotten first). */
const IDLE_SCHEDULES_KEPT = 10_000;

/**
 * How much later than the cache lifetime an idle fold may run: a tenth of it, at most 30 s. Within this time of its
 * last push-back a thread's idle fold is not pushed back again.
 */
export function idleFoldSlack(idleFoldDelayMs: number): number {
  return Math.min(30_000, Math.floor(idleFoldDelayMs / 10));
}

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
  const idleFoldSlackMs = idleFoldSlack(idleFoldDelayMs);
  /** When this process last pushed back each thread's idle fold. */
  const idleScheduledAt = new Map<string, number>();
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
      // Pushed back at most once per `slack`: a push-back costs a BullMQ script (the busiest Redis command of a
      // turn), and a chat's turns come seconds apart. The job is due `slack` later than the cache lifetime, so a
      // turn that skips its push-back still finds the job due at least the cache lifetime after it (and the job
      // checks the thread's quiet time itself when it runs: see the fold processor's `not-idle`).
      const now = Date.now();
      const last = idleScheduledAt.get(threadId);
      if (last !== undefined && now - last < idleFoldSlackMs) return;
      // Debounced: while the thread's idle fold is delayed, a new one only moves it to its delay from now
      // (reschedule). Its own id, not the trigger fold's, so a waiting idle fold never swallows a trigger fold; a
      // deduplication id, not a jobId, so a finished or failed job kept for admins never blocks the next one.
      await withEnqueueTimeout(
        queue.add(
          IDLE_FOLD_JOB,
          { threadId },
          {
            delay: idleFoldDelayMs + idleFoldSlackMs,
            deduplication: { id: `idle-fold-${threadId}`, reschedule: true },
            attempts: 2,
          },
        ),
      );
      // Remembered once Redis took it (a failed push-back is retried by the next turn); newest last, bounded.
      idleScheduledAt.delete(threadId);
      idleScheduledAt.set(threadId, now);
      if (idleScheduledAt.size > IDLE_SCHEDULES_KEPT) {
        const oldest = idleScheduledAt.keys().next().value;
        if (oldest !== undefined) idleScheduledAt.delete(oldest);
      }
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
