import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { foldThread, type FoldDeps, type FoldOutcome, type IdleFold } from '../core/summary/fold-thread';
import { rebuildSummary, type RebuildDeps, type RebuildOutcome } from '../core/summary/rebuild-summary';
import {
  rebuildAfterForget,
  type RebuildAfterForgetDeps,
  type RebuildAfterForgetOutcome,
} from '../core/summary/rebuild-after-forget';
import { titleThread, type TitleDeps, type TitleOutcome } from '../core/titles';
import { runWithLogContext, updateLogContext } from '../observability/log-context';
import {
  foldJobPayload,
  FORGET_REBUILD_JOB,
  forgetRebuildJobPayload,
  IDLE_FOLD_JOB,
  idleFoldJobPayload,
  REBUILD_JOB,
  rebuildJobPayload,
  type SummaryJobPayload,
  TITLE_JOB,
  titleJobPayload,
} from './queue-names';

/** What the summary queue's processor needs: the fold's dependencies plus the transcript for rebuilds. */
export type SummaryJobDeps = FoldDeps &
  Pick<RebuildDeps, 'transcript'> &
  Pick<RebuildAfterForgetDeps, 'threads'> & {
    /** Idle folds: how long a thread must be quiet (PROMPT_CACHE_TTL) and the least they fold (IDLE_FOLD_MIN_TOKENS). */
    idleFold: Omit<IdleFold, 'now'>;
    /** Title jobs: the title store and the model that makes titles (null: the offline model, words only). */
    title: TitleDeps;
    /**
     * Spend limits: when a fold of the thread should run instead of now (its owner's reset while they cannot send),
     * null to run it now. Absent: folds always run.
     */
    foldDeferredUntil?: (threadId: string) => Promise<Date | null>;
  };

type SummaryOutcome = FoldOutcome | RebuildOutcome | RebuildAfterForgetOutcome | TitleOutcome;

/**
 * The summary queue's jobs (fold, admin rebuild, rebuild after a forget, a chat's title): validate the payload and hand off to the
 * core. A failure rethrows into BullMQ's backoff; after the last attempt the previous summary stays and the error
 * is shown to admins. Every log line of a job carries its id and thread.
 */
export function createFoldProcessor(deps: SummaryJobDeps) {
  return (job: Job<SummaryJobPayload>, token?: string): Promise<SummaryOutcome> =>
    runWithLogContext(
      { jobId: job.id ?? 'unknown', queue: job.queueName },
      async () => {
        const parsed = parsePayload(job);
        const { threadId } = parsed;
        updateLogContext({ threadId });
        // A title's failure is not the summary's: it retries, and its last attempt falls back to the message's words.
        if (job.name === TITLE_JOB)
          return titleThread({ threadId, lastAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1) }, deps.title);
        try {
          if (job.name === FORGET_REBUILD_JOB) return await rebuildAfterForget({ threadId }, deps);
          if ('actorId' in parsed && typeof parsed.actorId === 'string')
            return await rebuildSummary({ threadId, actorId: parsed.actorId }, deps);
          const force = 'force' in parsed && parsed.force === true;
          const deferredUntil = force ? null : await deps.foldDeferredUntil?.(threadId);
          if (deferredUntil) {
            deps.log.info({ threadId, until: deferredUntil.toISOString() }, 'fold deferred to the spend limit reset');
            await job.moveToDelayed(deferredUntil.getTime(), token);
            throw new DelayedError();
          }
          if (job.name === IDLE_FOLD_JOB) {
            const outcome = await foldThread({ threadId, idle: { ...deps.idleFold, now: new Date() } }, deps);
            if (outcome.status !== 'not-idle') return outcome;
            // The thread spoke since this was scheduled (and its push-back did not reach this job): wait out the rest.
            await job.moveToDelayed(outcome.at.getTime(), token);
            throw new DelayedError();
          }
          return await foldThread({ threadId, force }, deps);
        } catch (error) {
          if (error instanceof DelayedError) throw error;
          const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
          const message = error instanceof Error ? error.message : String(error);
          deps.log.warn(
            { err: error, threadId, job: job.name, attempt: job.attemptsMade + 1, lastAttempt },
            `${job.name} failed`,
          );
          if (lastAttempt)
            await deps.summaries.recordFoldError(threadId, job.name === 'fold' ? message : `${job.name}: ${message}`);
          throw error;
        }
      },
      { fresh: true },
    );
}

function parsePayload(job: Job<SummaryJobPayload>) {
  const schema =
    job.name === FORGET_REBUILD_JOB
      ? forgetRebuildJobPayload
      : job.name === REBUILD_JOB
        ? rebuildJobPayload
        : job.name === IDLE_FOLD_JOB
          ? idleFoldJobPayload
          : job.name === TITLE_JOB
            ? titleJobPayload
            : foldJobPayload;
  const parsed = schema.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`invalid ${job.name} payload: ${parsed.error.message}`);
  return parsed.data;
}
