import { UnrecoverableError, type Job } from 'bullmq';
import { foldThread, type FoldDeps, type FoldOutcome } from '../core/summary/fold-thread';
import { runWithLogContext, updateLogContext } from '../observability/log-context';
import { foldJobPayload, type FoldJobPayload } from './queue-names';

/**
 * The summary job: validates the payload and hands off to the core's foldThread. A failure rethrows into
 * BullMQ's backoff; after the last attempt the previous summary stays and the error is shown to admins.
 */
export function createFoldProcessor(deps: FoldDeps) {
  return (job: Job<FoldJobPayload>): Promise<FoldOutcome> => runWithLogContext({ jobId: job.id ?? 'unknown', queue: job.queueName }, async () => {
    const parsed = foldJobPayload.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid fold payload: ${parsed.error.message}`);
    const { threadId, force } = parsed.data;
    updateLogContext({ threadId });
    try {
      const outcome = await foldThread({ threadId, force }, deps);
      return outcome;
    } catch (error) {
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const message = error instanceof Error ? error.message : String(error);
      deps.log.warn({ err: error, threadId, attempt: job.attemptsMade + 1, lastAttempt }, 'fold failed');
      if (lastAttempt) await deps.summaries.recordFoldError(threadId, message);
      throw error;
    }
  }, { fresh: true });
}
