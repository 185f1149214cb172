import type { TokenCounter } from '../context';
import { toMessageDto } from '../dto/api-dto';
import type { LogPort, ThreadEventBus, ToolRun, ToolRunStore } from '../ports';
import { condenseToolResult, truncateResult, type CondenseDeps } from './condense-tool-result';
import { executeTool, ToolCancelledError, type ToolOutcome } from './execute-tool';
import { toToolRunDto } from './to-tool-run-dto';
import type { ToolRegistry } from './tool-registry';
import { cancelRemote, runBackgroundTool } from './run-background-tool';
import { TERMINAL_RUN_STATUSES, type ToolServices } from './types';

export interface AsyncToolDeps {
  registry: ToolRegistry;
  runs: ToolRunStore;
  services: ToolServices;
  events: ThreadEventBus;
  log: LogPort;
  counter: TokenCounter;
  condense: Omit<CondenseDeps, 'counter' | 'log'>;
  /** TOOL_TIMEOUT_MS: the limit of a run whose tool sets none. */
  timeoutMs: number;
  /** TOOL_RESULT_MAX_CHARS. */
  maxResultChars: number;
  /** How often the cancel flag is read. Default 500 ms. */
  cancelPollMs?: number;
  /** Called after a report queued (or joined) a follow-up turn: some process must run it. */
  onFollowUp(threadId: string): void;
  /** Enqueues the next poll of background work (a delayed job). */
  schedulePoll(runId: string, delayMs: number): Promise<void>;
}

export type AsyncToolOutcome = 'reported' | 'already-reported' | 'missing' | 'submitted' | 'polled';

/** The note that enters the context (and the transcript's text) for a finished run. */
export function runReportHeader(run: Pick<ToolRun, 'name' | 'id' | 'startedAtSeq' | 'status'>): string {
  const where = `${run.name} (run ${run.id}, started at seq ${run.startedAtSeq})`;
  switch (run.status) {
    case 'succeeded':
      return `Result of ${where}:`;
    case 'timed_out':
      return `${where} timed out:`;
    case 'cancelled':
      return `${where} was cancelled:`;
    default:
      return `${where} failed:`;
  }
}

/**
 * Executes one async tool run in the worker and reports it once. Idempotent by run id: a retry after a worker
 * died runs the tool again from the start; a run already finished is only reported (if it was not yet); a
 * report happens at most once (`reportedAt`, set in the report's transaction). The processor enforces the time
 * limit with an AbortSignal and polls the cancel flag, so a cancel from any process reaches it.
 */
export async function runAsyncTool(input: { runId: string }, deps: AsyncToolDeps): Promise<AsyncToolOutcome> {
  const found = await deps.runs.findRun(input.runId, null);
  if (!found) return 'missing';
  const background = deps.registry.get(found.name)?.background;
  // Cancelled here (the user, a forget, a timeout) while the other side still works on it: tell it to stop.
  if (background && found.taskId && found.status === 'cancelled' && !found.remoteCancelledAt)
    await cancelRemote(found, background, deps);
  if (found.reportedAt) return 'already-reported';
  if (TERMINAL_RUN_STATUSES.includes(found.status)) return report(found, deps);
  if (background) {
    return runBackgroundTool(found, background, {
      ...deps,
      timeoutFor: (run) => deps.registry.get(run.name)?.timeoutMs ?? deps.timeoutMs,
      finish: (run, outcome) => completeRun(run, outcome, deps),
      start: (runId) => deps.runs.startRun(runId),
    });
  }
  const run = await deps.runs.startRun(input.runId);
  if (!run) return reportCurrent(input.runId, deps);
  deps.events.publish({
    type: 'tool-progress',
    threadId: run.threadId,
    runId: run.id,
    progress: run.progress,
    note: run.attempts > 1 ? `restarted (attempt ${run.attempts})` : 'started',
  });
  const outcome = await execute(run, deps);
  return completeRun(run, outcome, deps);
}

/** Stores an outcome (truncated, condensed when large) unless the run ended meanwhile, then reports the run. */
export async function completeRun(run: ToolRun, outcome: ToolOutcome, deps: AsyncToolDeps): Promise<AsyncToolOutcome> {
  // Ended meanwhile (a forget discarded the run): its outcome stands, and this result reaches no model.
  const current = await deps.runs.findRun(run.id, null);
  if (current && TERMINAL_RUN_STATUSES.includes(current.status)) return reportCurrent(run.id, deps);
  const transcript = truncateResult(outcome.text, deps.maxResultChars);
  const condensed =
    outcome.status === 'succeeded'
      ? await condenseToolResult(
          { threadId: run.threadId, toolName: run.name, handle: run.id, text: transcript },
          { ...deps.condense, counter: deps.counter, log: deps.log },
        )
      : null;
  await deps.runs.finishRun({
    runId: run.id,
    status: outcome.status,
    result: outcome.status === 'succeeded' ? transcript : null,
    resultTokens: outcome.status === 'succeeded' ? deps.counter.countText(transcript) : null,
    condensed: condensed?.condensed ? condensed.content : null,
    error: outcome.status === 'succeeded' ? null : outcome.error,
  });
  return reportCurrent(run.id, deps);
}

async function execute(run: ToolRun, deps: AsyncToolDeps): Promise<ToolOutcome> {
  const controller = new AbortController();
  const poll = setInterval(() => {
    deps.runs.isCancelRequested(run.id).then(
      (requested) => {
        if (requested) controller.abort(new ToolCancelledError('The user cancelled the run.'));
      },
      (error: unknown) => deps.log.warn({ err: error, runId: run.id }, 'could not read the cancel flag'),
    );
  }, deps.cancelPollMs ?? 500);
  const lines: string[] = [];
  const tool = deps.registry.get(run.name);
  // Progress reports are saved one after the other, and all of them before the outcome is stored: a tool that
  // fires them without awaiting (MCP progress notifications) never has one land after its result.
  let saving: Promise<unknown> = Promise.resolve();
  const save = async (progress: number, note?: string) => {
    const bounded = Math.min(1, Math.max(0, progress));
    lines.push(`[${Math.round(bounded * 100)}%]${note ? ` ${note}` : ''}`);
    const message = await deps.runs.saveProgress({
      runId: run.id,
      progress: bounded,
      note: note ?? null,
      transcriptText: `${run.name} (run ${run.id}) is running…\n${lines.join('\n')}`,
    });
    deps.events.publish({
      type: 'tool-progress',
      threadId: run.threadId,
      runId: run.id,
      progress: bounded,
      ...(note ? { note } : {}),
    });
    if (message)
      deps.events.publish({ type: 'message-updated', threadId: run.threadId, message: toMessageDto(message) });
  };
  try {
    return await executeTool({
      registry: deps.registry,
      call: { name: run.name, args: run.args },
      timeoutMs: tool?.timeoutMs ?? deps.timeoutMs,
      signal: controller.signal,
      log: deps.log,
      context: {
        threadId: run.threadId,
        runId: run.id,
        services: deps.services,
        counter: deps.counter,
        inlineTokens: deps.condense.inlineTokens,
        now: () => new Date(),
        reportProgress: (progress, note) => {
          const next = saving.then(() => save(progress, note));
          saving = next.catch((error: unknown) =>
            deps.log.warn({ err: error, runId: run.id }, 'could not save tool progress'),
          );
          return next;
        },
      },
    });
  } finally {
    clearInterval(poll);
    await saving;
  }
}

export async function reportCurrent(runId: string, deps: AsyncToolDeps): Promise<AsyncToolOutcome> {
  const run = await deps.runs.findRun(runId, null);
  if (!run) return 'missing';
  if (run.reportedAt) return 'already-reported';
  return report(run, deps);
}

/**
 * Completes the run's transcript message with the full text, adds the note to the context, queues the follow-up.
 * When the outcome changed after it was read (a forget discarded it), the report is written again from the new one.
 */
async function report(run: ToolRun, deps: AsyncToolDeps, attempt = 1): Promise<AsyncToolOutcome> {
  const header = runReportHeader(run);
  const body =
    run.status === 'succeeded'
      ? (run.result ?? '')
      : `${run.error ?? 'no reason given'}\nTell the user, and offer to try again if that makes sense.`;
  const noteBody = run.status === 'succeeded' ? (run.condensed ?? run.result ?? '') : body;
  const transcriptText = `${header}\n${body}`;
  const note = `${header}\n${noteBody}`;
  const reported = await deps.runs.reportRun({
    runId: run.id,
    transcriptText,
    transcriptTokens: deps.counter.countMessage({ role: 'system', content: transcriptText }),
    note: { content: note, tokens: deps.counter.countMessage({ role: 'system', content: note }) },
    encoding: deps.counter.encoding,
    basedOn: { status: run.status, error: run.error },
  });
  if (!reported.reported) {
    const current = attempt < 3 ? await deps.runs.findRun(run.id, null) : null;
    return current && !current.reportedAt && TERMINAL_RUN_STATUSES.includes(current.status)
      ? report(current, deps, attempt + 1)
      : 'already-reported';
  }
  deps.events.publish({ type: 'message-end', threadId: run.threadId, message: toMessageDto(reported.message) });
  deps.events.publish({ type: 'tool-end', threadId: run.threadId, run: toToolRunDto(run) });
  deps.log.info(
    {
      runId: run.id,
      threadId: run.threadId,
      status: run.status,
      followUp: reported.followUp.id,
      newFollowUp: reported.followUpCreated,
    },
    'tool run reported',
  );
  deps.onFollowUp(run.threadId);
  return 'reported';
}
