import { AppError } from '../errors/app-error';
import type { LogPort, ToolQueue, ToolRun, ToolRunStore } from '../ports';

/**
 * Cancels a user's tool run (REST `POST /api/tool-runs/:id/cancel` and the socket's `tool-cancel`).
 * Resolves with the run after the cancel request, or null when it had already finished; another user's run
 * or an unknown one is NOT_FOUND. A run cancelled before it started gets a job so its report is written.
 */
export async function cancelToolRun(
  input: { runId: string; userId: string },
  deps: { runs: ToolRunStore; queue: ToolQueue; log: LogPort },
): Promise<ToolRun | null> {
  const run = await deps.runs.findRun(input.runId, input.userId);
  if (!run) throw new AppError('NOT_FOUND', 'No such tool run.');
  const cancelled = await deps.runs.requestCancel(run.id);
  // A run cancelled before it started needs a job for its report; background work (submitted elsewhere, no job
  // running) needs one to send the cancel to the other side now rather than at its next poll.
  if (cancelled?.status === 'cancelled' || cancelled?.taskId) {
    await deps.queue
      .enqueueToolRun(run.id)
      .catch((error: unknown) =>
        deps.log.warn({ err: error, runId: run.id }, 'could not enqueue a cancelled run for its report'),
      );
  }
  return cancelled;
}
