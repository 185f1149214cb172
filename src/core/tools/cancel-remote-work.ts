import type { LogPort, ToolRunStore } from '../ports';
import { cancelRemote } from './run-background-tool';
import type { ToolRegistry } from './tool-registry';
import { TERMINAL_RUN_STATUSES } from './types';

/**
 * Tells the other side of these runs' background work to stop (MCP tasks/cancel, an external runner's cancel), for
 * the runs it still works on: submitted, and not finished here, or cancelled here without the cancel sent yet. For
 * an erasure (issue 27), before the runs' rows are deleted: afterwards no job could find what to cancel. The
 * cancels go out together, each bounded by the submit timeout; a failure is logged. Returns how many were sent.
 */
export async function cancelRemoteWork(
  runIds: readonly string[],
  deps: { runs: ToolRunStore; registry: Pick<ToolRegistry, 'get'>; log: LogPort },
): Promise<number> {
  const runs = await Promise.all(runIds.map((runId) => deps.runs.findRun(runId, null)));
  const working = runs.flatMap((run) => {
    const work = run ? deps.registry.get(run.name)?.background : undefined;
    if (!run || !work || !run.taskId || run.remoteCancelledAt) return [];
    const stillWorking = !TERMINAL_RUN_STATUSES.includes(run.status) || run.status === 'cancelled';
    return stillWorking ? [{ run, work }] : [];
  });
  await Promise.all(working.map(({ run, work }) => cancelRemote(run, work, deps)));
  return working.length;
}
