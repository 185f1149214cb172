import { UnrecoverableError, type Job } from 'bullmq';
import { runAsyncTool, type AsyncToolDeps, type AsyncToolOutcome } from '../core/tools/run-async-tool';
import { toolJobPayload, type ToolJobPayload } from './queue-names';

/**
 * The tools job: validates the payload and hands off to the core's runAsyncTool (idempotent by run id).
 * A store failure rethrows into BullMQ's backoff; after the last attempt the run is failed, so the sweeper
 * gets it reported.
 */
export function createToolProcessor(deps: AsyncToolDeps) {
  return async (job: Job<ToolJobPayload>): Promise<AsyncToolOutcome> => {
    const parsed = toolJobPayload.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid tool payload: ${parsed.error.message}`);
    try {
      return await runAsyncTool({ runId: parsed.data.runId }, deps);
    } catch (error) {
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      deps.log.warn(
        { err: error, runId: parsed.data.runId, attempt: job.attemptsMade + 1, lastAttempt },
        'tool job failed',
      );
      if (lastAttempt) await failRun(parsed.data.runId, error, deps);
      throw error;
    }
  };
}

/** Gives up on a run: recorded as failed (never reported yet; the sweeper re-enqueues it for the report). */
export async function failRun(runId: string, error: unknown, deps: Pick<AsyncToolDeps, 'runs' | 'log'>): Promise<void> {
  const reason = error instanceof Error ? error.message : String(error);
  await deps.runs
    .finishRun({
      runId,
      status: 'failed',
      result: null,
      resultTokens: null,
      condensed: null,
      error: `The tool could not be run: ${reason}`,
    })
    .catch((storeError: unknown) => deps.log.error({ err: storeError, runId }, 'could not record a failed tool run'));
}
