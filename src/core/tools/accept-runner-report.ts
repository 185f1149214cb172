import { AppError } from '../errors/app-error';
import type { ToolOutcome } from './execute-tool';
import { completeRun, type AsyncToolDeps } from './run-async-tool';
import { saveBackgroundProgress } from './run-background-tool';
import { TERMINAL_RUN_STATUSES } from './types';
import type { ToolRun } from '../ports';

/** What an external runner reports to `POST /api/tool-runs/:id/progress` and `.../result` (signature checked by the route). */
export type RunnerReport =
  | { kind: 'progress'; progress: number; note?: string }
  | { kind: 'result'; status: 'succeeded'; result: string }
  | { kind: 'result'; status: 'failed'; error: string };

async function externalRun(runId: string, deps: AsyncToolDeps): Promise<ToolRun> {
  const run = await deps.runs.findRun(runId, null);
  const source = run ? deps.registry.get(run.name)?.source : undefined;
  if (!run || source?.kind !== 'external') throw new AppError('NOT_FOUND', 'No such external tool run.');
  return run;
}

/**
 * A runner's report. Progress is saved and streamed; a result completes the run (condensed, reported once, a
 * follow-up queued) like every async run. A repeated result is ignored (`duplicate`); a report for a run that timed
 * out, was cancelled or ended otherwise is CONFLICT (409), so the runner knows its work is no longer wanted.
 */
export async function acceptRunnerReport(
  input: { runId: string; report: RunnerReport },
  deps: AsyncToolDeps,
): Promise<{ duplicate: boolean; run: ToolRun }> {
  const run = await externalRun(input.runId, deps);
  const { report } = input;
  if (TERMINAL_RUN_STATUSES.includes(run.status)) {
    if (report.kind === 'result' && report.status === run.status) return { duplicate: true, run };
    throw new AppError('CONFLICT', `The run has already ended (${run.status}); this report is refused.`);
  }
  if (run.status !== 'running' || !run.taskId)
    throw new AppError('CONFLICT', 'The run has not been handed to a runner yet.');
  if (report.kind === 'progress') {
    await saveBackgroundProgress(run, deps, Math.min(1, Math.max(0, report.progress)), report.note ?? null);
    return { duplicate: false, run };
  }
  const outcome: ToolOutcome =
    report.status === 'succeeded'
      ? { status: 'succeeded', text: report.result }
      : { status: 'failed', text: `Error: ${report.error}`, error: `${run.name} failed: ${report.error}` };
  await completeRun(run, outcome, deps);
  const after = await deps.runs.findRun(run.id, null);
  if (after && after.status !== report.status)
    throw new AppError('CONFLICT', `The run has already ended (${after.status}); this report is refused.`);
  return { duplicate: false, run: after ?? run };
}
