import { UnrecoverableError, type Job } from 'bullmq';
import { foldThread, type FoldDeps, type FoldOutcome } from '../core/summary/fold-thread';
import { rebuildSummary, type RebuildDeps, type RebuildOutcome } from '../core/summary/rebuild-summary';
import { foldJobPayload, REBUILD_JOB, rebuildJobPayload, type SummaryJobPayload } from './queue-names';

/** What the summary queue's processor needs: the fold's dependencies plus the transcript for rebuilds. */
export type SummaryJobDeps = FoldDeps & Pick<RebuildDeps, 'transcript'>;

/**
 * The summary queue's processor: validates the payload and hands off to the core (foldThread, or rebuildSummary
 * for `rebuild` jobs). A failure rethrows into BullMQ's backoff; after the last attempt the previous summary stays
 * and the error is shown to admins.
 */
export function createFoldProcessor(deps: SummaryJobDeps) {
  return async (job: Job<SummaryJobPayload>): Promise<FoldOutcome | RebuildOutcome> => {
    const rebuild = job.name === REBUILD_JOB;
    const parsed = (rebuild ? rebuildJobPayload : foldJobPayload).safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid ${job.name} payload: ${parsed.error.message}`);
    const { threadId } = parsed.data;
    try {
      if ('actorId' in parsed.data) return await rebuildSummary({ threadId, actorId: parsed.data.actorId }, deps);
      return await foldThread({ threadId, force: parsed.data.force }, deps);
    } catch (error) {
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const message = error instanceof Error ? error.message : String(error);
      deps.log.warn({ err: error, threadId, job: job.name, attempt: job.attemptsMade + 1, lastAttempt }, `${job.name} failed`);
      if (lastAttempt) await deps.summaries.recordFoldError(threadId, rebuild ? `rebuild: ${message}` : message);
      throw error;
    }
  };
}
