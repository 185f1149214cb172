import { toMessageDto } from '../dto/api-dto';
import type { LogPort, ThreadEventBus, ToolRun, ToolRunStore } from '../ports';
import { publicToolError, type ToolOutcome } from './execute-tool';
import type { BackgroundContext, BackgroundWork } from './types';

/** What background runs need (a subset of AsyncToolDeps, plus the way back to completing a run). */
export interface BackgroundDeps {
  runs: ToolRunStore;
  events: ThreadEventBus;
  log: LogPort;
  /** TOOL_TIMEOUT_MS: the limit of a run whose tool sets none. */
  timeoutMs: number;
  schedulePoll(runId: string, delayMs: number): Promise<void>;
}

type Finish = (
  run: ToolRun,
  outcome: ToolOutcome,
) => Promise<'reported' | 'already-reported' | 'missing' | 'submitted' | 'polled'>;

/** Submitting may not hang a worker slot: the other side answers (with a task id) or the submit fails. */
const SUBMIT_TIMEOUT_MS = 30_000;

function contextOf(run: ToolRun, deps: BackgroundDeps, signal: AbortSignal): BackgroundContext {
  let saving: Promise<unknown> = Promise.resolve();
  return {
    runId: run.id,
    threadId: run.threadId,
    signal,
    reportProgress: (progress, note) => {
      const next = saving.then(() =>
        saveBackgroundProgress(run, deps, Math.min(1, Math.max(0, progress)), note ?? null),
      );
      saving = next.catch((error: unknown) =>
        deps.log.warn({ err: error, runId: run.id }, 'could not save tool progress'),
      );
      return next;
    },
  };
}

/** Saves background progress on the run and its transcript message, and streams it. */
export async function saveBackgroundProgress(
  run: ToolRun,
  deps: Pick<BackgroundDeps, 'runs' | 'events'>,
  progress: number,
  note: string | null,
): Promise<void> {
  const line = `[${Math.round(progress * 100)}%]${note ? ` ${note}` : ''}`;
  const message = await deps.runs.saveProgress({
    runId: run.id,
    progress,
    note,
    transcriptText: `${run.name} (run ${run.id}) is running…\n${line}`,
  });
  deps.events.publish({
    type: 'tool-progress',
    threadId: run.threadId,
    runId: run.id,
    progress,
    ...(note ? { note } : {}),
  });
  if (message) deps.events.publish({ type: 'message-updated', threadId: run.threadId, message: toMessageDto(message) });
}

function failure(status: 'failed' | 'timed_out' | 'cancelled', error: string): ToolOutcome {
  return { status, text: `Error: ${error}`, error };
}

/** Sends the cancel to the other side once; a failure is logged (the run is cancelled here in any case). */
export async function cancelRemote(
  run: ToolRun,
  work: BackgroundWork,
  deps: Pick<BackgroundDeps, 'runs' | 'log'>,
): Promise<void> {
  if (!run.taskId) return;
  try {
    await work.cancel(run.taskId, {
      runId: run.id,
      threadId: run.threadId,
      signal: AbortSignal.timeout(SUBMIT_TIMEOUT_MS),
      reportProgress: async () => undefined,
    });
    deps.log.info({ runId: run.id, taskId: run.taskId }, "cancel sent to the tool's other side");
  } catch (error) {
    deps.log.warn(
      { err: error, runId: run.id, taskId: run.taskId },
      "could not send the cancel to the tool's other side",
    );
  }
  await deps.runs.markRemoteCancelled(run.id);
}

/**
 * One job of background work (an MCP task over Streamable HTTP, an external runner). Not submitted yet: submits it,
 * stores the task id and the deadline (Postgres' clock), schedules a poll and ends, so no worker slot is held while
 * it works. Work with a preset task id (external runners) stores both before the request and is handed over once
 * the other side answered; stored but never answered, the request is sent again with the same idempotency key. Submitted: claims this poll in Postgres (a duplicate chain ends here), cancels it when asked, times it
 * out past the deadline, otherwise asks how it goes and finishes it or schedules the next poll. A worker that dies
 * is followed by the next poll job on any worker, which resumes by task id: the tool is never called twice.
 */
export async function runBackgroundTool(
  found: ToolRun,
  work: BackgroundWork,
  deps: SubmitDeps,
): Promise<'reported' | 'already-reported' | 'missing' | 'submitted' | 'polled'> {
  if (!found.taskId) return submit(found, work, deps);
  if (found.cancelRequested) {
    await cancelRemote(found, work, deps);
    return deps.finish(found, failure('cancelled', 'The user cancelled the run.'));
  }
  // Stored, but the other side never answered (the worker died around the request): send it again, same key.
  if (work.presetTaskId && !found.handedAt) return handOver(found, work, deps);
  const claim = await deps.runs.claimPoll({ runId: found.id, minIntervalMs: Math.floor(work.pollIntervalMs / 2) });
  if (!claim.claimed) return 'polled';
  if (claim.overdue) {
    await cancelRemote(found, work, deps);
    return deps.finish(
      found,
      failure('timed_out', `${found.name} did not finish within ${deps.timeoutFor(found)} ms and was stopped.`),
    );
  }
  if (!work.poll) return next(found, work, deps);
  const context = contextOf(found, deps, AbortSignal.timeout(SUBMIT_TIMEOUT_MS));
  let status;
  try {
    status = await work.poll(found.taskId, context);
  } catch (error) {
    // The other side is down or slow: poll again until the deadline.
    deps.log.warn(
      { err: error, runId: found.id, taskId: found.taskId },
      'could not poll background work; will try again',
    );
    return next(found, work, deps);
  }
  if (status.state === 'working') {
    if (status.note && status.note !== found.progressNote)
      await context.reportProgress(status.progress ?? found.progress, status.note);
    return next(found, work, deps);
  }
  if (status.state === 'succeeded') return deps.finish(found, { status: 'succeeded', text: status.text });
  return deps.finish(found, failure(status.state, status.error));
}

async function next(run: ToolRun, work: BackgroundWork, deps: BackgroundDeps): Promise<'polled'> {
  await deps
    .schedulePoll(run.id, work.pollIntervalMs)
    .catch((error: unknown) =>
      deps.log.warn({ err: error, runId: run.id }, 'could not schedule the next poll; the sweeper will'),
    );
  return 'polled';
}

type SubmitDeps = BackgroundDeps & {
  timeoutFor(run: ToolRun): number;
  finish: Finish;
  start(runId: string): Promise<ToolRun | null>;
};

async function submit(found: ToolRun, work: BackgroundWork, deps: SubmitDeps) {
  if (found.cancelRequested)
    return deps.finish(found, failure('cancelled', 'The user cancelled the run before it started.'));
  const run = await deps.start(found.id);
  if (!run) return 'already-reported' as const;
  deps.events.publish({
    type: 'tool-progress',
    threadId: run.threadId,
    runId: run.id,
    progress: run.progress,
    note: run.attempts > 1 ? `restarted (attempt ${run.attempts})` : 'started',
  });
  if (work.presetTaskId) {
    // The task id (the idempotency key) and the deadline first: a report that beats the request's answer finds its
    // run handed over, and a retry after a crash sends the same key again.
    const taskId = work.presetTaskId(run.id);
    if (!(await deps.runs.markSubmitted({ runId: run.id, taskId, timeoutMs: deps.timeoutFor(run) })))
      return 'polled' as const;
    return handOver({ ...run, taskId }, work, deps);
  }
  let taskId: string;
  try {
    ({ taskId } = await work.submit(run.args, contextOf(run, deps, AbortSignal.timeout(SUBMIT_TIMEOUT_MS))));
  } catch (error) {
    return deps.finish(
      run,
      failure(
        'failed',
        `${run.name} could not be started: ${publicToolError({ toolName: run.name, error, log: deps.log, runId: run.id })}`,
      ),
    );
  }
  await deps.runs.markSubmitted({ runId: run.id, taskId, timeoutMs: deps.timeoutFor(run) });
  deps.log.info({ runId: run.id, taskId }, 'background work submitted');
  await next(run, work, deps);
  return 'submitted' as const;
}

/** Sends the run request of a stored preset task id (again, after a crash: the same key); acknowledged, it is handed. */
async function handOver(
  run: ToolRun,
  work: BackgroundWork,
  deps: SubmitDeps,
): Promise<'reported' | 'already-reported' | 'missing' | 'submitted' | 'polled'> {
  try {
    await work.submit(run.args, contextOf(run, deps, AbortSignal.timeout(SUBMIT_TIMEOUT_MS)));
  } catch (error) {
    // The runner's own words may name its address: the log keeps them, the user and the model get a reference.
    return deps.finish(
      run,
      failure(
        'failed',
        `${run.name} could not be started: ${publicToolError({ toolName: run.name, error, log: deps.log, runId: run.id })}`,
      ),
    );
  }
  await deps.runs.markHanded(run.id);
  deps.log.info({ runId: run.id, taskId: run.taskId }, 'background work handed over');
  await next(run, work, deps);
  return 'submitted';
}
