import type { ContextSettings } from '../core/thread-context/context-settings';
import { INTERRUPTED_ANSWER_ERROR } from '../core/turn/errors-for-user';
import type {
  FoldLagPolicy,
  FoldQueue,
  ForgetRebuildQueue,
  LogPort,
  MemoryControlsStore,
  SummaryStore,
  ToolQueue,
  ToolRunStore,
  TurnStore,
} from '../core/ports';

/** The deployment trigger as the thresholds of the sweeper's SQL (any condition fires). */
export function foldThresholds(settings: ContextSettings): { minWindowTokens: number; minWindowMessages: number } {
  let minWindowTokens = Number.MAX_SAFE_INTEGER;
  let minWindowMessages = Number.MAX_SAFE_INTEGER;
  for (const condition of settings.trigger.conditions) {
    if (condition.kind === 'tokens') minWindowTokens = Math.min(minWindowTokens, condition.value);
    if (condition.kind === 'fraction')
      minWindowTokens = Math.min(minWindowTokens, Math.floor(condition.value * settings.profile.maxInputTokens));
    if (condition.kind === 'messages') minWindowMessages = Math.min(minWindowMessages, condition.value);
  }
  return {
    minWindowTokens: Math.min(minWindowTokens, 2_000_000_000),
    minWindowMessages: Math.min(minWindowMessages, 2_000_000_000),
  };
}

/** The deployment's trigger and keep in the form the admin list's SQL evaluates (`foldLagEntries`). */
export function foldLagPolicy(settings: ContextSettings): FoldLagPolicy {
  const { keep } = settings;
  return {
    ...foldThresholds(settings),
    keep:
      keep.kind === 'fraction'
        ? { kind: 'tokens', value: Math.floor(keep.value * settings.profile.maxInputTokens) }
        : { kind: keep.kind, value: keep.value },
  };
}

/** Enqueues the rebuilds of withdrawn summaries (one job per withdrawal: repeated sweeps deduplicate). */
async function enqueueWithdrawnRebuilds(
  rebuilds: NonNullable<SweeperOptions['rebuilds']>,
  log: LogPort,
): Promise<number> {
  let enqueued = 0;
  for (const { threadId, version } of await rebuilds.memory.threadsAwaitingRebuild(100)) {
    try {
      await rebuilds.queue.enqueueForgetRebuild({ threadId, version });
      enqueued += 1;
    } catch (error) {
      log.warn({ err: error }, 'sweeper could not enqueue summary rebuilds (Redis down?); will try again');
      break;
    }
  }
  return enqueued;
}

export interface Sweeper {
  sweep(): Promise<{ foldsEnqueued: number; threadsResumed: number; toolRunsEnqueued: number }>;
  start(): void;
  /** Stops the timer and resolves once a sweep in flight has finished (so the database can close after it). */
  stop(): Promise<void>;
}

/** What the sweeper sweeps (createSweeper). */
export interface SweeperOptions {
  turns: TurnStore;
  summaries: SummaryStore;
  folds: FoldQueue;
  settings: ContextSettings;
  log: LogPort;
  /** Summaries withdrawn by a forget whose rebuild job was lost (Redis down, process died). */
  rebuilds?: { memory: Pick<MemoryControlsStore, 'threadsAwaitingRebuild'>; queue: ForgetRebuildQueue };
  /** Resumes the queued turns of a thread (serve processes); absent in worker-only processes. */
  resumeTurns?: (threadId: string) => void;
  /**
   * RESUME_INTERRUPTED_TURNS: what becomes of a turn whose process died mid-answer (its lease expired). `retry`
   * (default): it runs again once, its partial answer superseded; a re-run cut off too ends as `fail` does. `fail`: its
   * answer ends with the error INTERRUPTED, which the user may retry.
   */
  interruptedTurns?: 'retry' | 'fail';
  /** The tool-run outbox: runs left `queued` (an enqueue that failed) and finished runs never reported. */
  toolRuns?: { runs: ToolRunStore; queue: ToolQueue; olderThanMs: number };
  /**
   * Retention (issue 27): threads idle longer than `retentionDays` are deleted (unset: kept forever), and guests are
   * erased once older than `guestMaxAgeSeconds` plus `retentionDays` (a week when unset).
   */
  retention?: {
    retentionDays: number | undefined;
    guestMaxAgeSeconds: number;
    /** Deletes up to `limit` threads idle since `before`; returns their ids and their tool runs' ids. */
    deleteIdleThreads(before: Date, limit: number): Promise<{ threadIds: string[]; runIds: string[] }>;
    /** Removes the jobs naming those threads or runs (queued or finished); a failure is logged, the sweep goes on. */
    removeJobs(refs: { threadIds: string[]; runIds: string[] }): Promise<number>;
    guestsCreatedBefore(before: Date, limit: number): Promise<string[]>;
    eraseGuest(userId: string): Promise<unknown>;
    now?: () => Date;
  };
  /**
   * Spend limits: releases reservations that expired or whose turn ended without releasing them (a crashed process'),
   * after the interrupted turns are recovered; returns how many.
   */
  releaseSpend?: () => Promise<number>;
  intervalMs?: number;
}

/** Turns whose process died (their lease expired): running ones recovered per `interruptedTurns`, then resumed. */
async function resumeStrandedTurns(options: SweeperOptions): Promise<number> {
  if (!options.resumeTurns) return 0;
  let threadsResumed = 0;
  for (const threadId of await options.turns.threadsWithStrandedTurns(100)) {
    const { resumed, failed } = await options.turns.recoverInterruptedTurns({
      threadId,
      resume: (options.interruptedTurns ?? 'retry') === 'retry',
      error: INTERRUPTED_ANSWER_ERROR,
    });
    if (resumed.length + failed.length > 0)
      options.log.warn({ threadId, resumed, failed }, 'answers cut off by a dead process: run again or ended');
    options.resumeTurns(threadId);
    threadsResumed += 1;
  }
  return threadsResumed;
}

/** Enqueues the folds the deployment's trigger asks for (until Redis refuses one). */
async function enqueueDueFolds(options: SweeperOptions): Promise<number> {
  let foldsEnqueued = 0;
  const due = await options.summaries.threadsNeedingFold({
    limit: 500,
    ...foldThresholds(options.settings),
    maxInputTokens: options.settings.profile.maxInputTokens,
  });
  for (const threadId of due) {
    try {
      await options.folds.enqueueFold(threadId, 'sweeper');
      foldsEnqueued += 1;
    } catch (error) {
      options.log.warn({ err: error }, 'sweeper could not enqueue folds (Redis down?); will try again');
      break;
    }
  }
  return foldsEnqueued;
}

/** Deletes threads idle past the retention and erases guests past their age (with its grace). */
async function applyRetention(options: SweeperOptions): Promise<void> {
  const retention = options.retention;
  if (!retention) return;
  const now = (retention.now ?? (() => new Date()))().getTime();
  const day = 86_400_000;
  const deleted =
    retention.retentionDays === undefined
      ? null
      : await retention.deleteIdleThreads(new Date(now - retention.retentionDays * day), 500);
  const threadsDeleted = deleted?.threadIds.length ?? 0;
  if (deleted && threadsDeleted > 0) {
    await retention
      .removeJobs(deleted)
      .catch((error: unknown) =>
        options.log.warn({ err: error }, 'could not remove the jobs of threads deleted by retention'),
      );
  }
  const guestGraceMs = (retention.retentionDays ?? 7) * day;
  const guests = await retention.guestsCreatedBefore(
    new Date(now - retention.guestMaxAgeSeconds * 1000 - guestGraceMs),
    100,
  );
  for (const userId of guests) await retention.eraseGuest(userId);
  if (threadsDeleted + guests.length > 0)
    options.log.info({ threadsDeleted, guestsErased: guests.length }, 'retention applied');
}

/** Enqueues the tool runs of the outbox (until Redis refuses one). */
async function enqueueToolRuns(options: SweeperOptions): Promise<number> {
  if (!options.toolRuns) return 0;
  const { runs, queue, olderThanMs } = options.toolRuns;
  let enqueued = 0;
  for (const runId of await runs.runsNeedingWork({ limit: 200, olderThanMs })) {
    try {
      await queue.enqueueToolRun(runId);
      enqueued += 1;
    } catch (error) {
      options.log.warn({ err: error }, 'sweeper could not enqueue tool runs (Redis down?); will try again');
      break;
    }
  }
  return enqueued;
}

/** One sweep, its steps in order: stranded turns, spend reservations, summary rebuilds, folds, tool runs, retention. */
async function sweepOnce(options: SweeperOptions): ReturnType<Sweeper['sweep']> {
  const threadsResumed = await resumeStrandedTurns(options);
  const spendReleased = options.releaseSpend ? await options.releaseSpend() : 0;
  if (spendReleased > 0) options.log.info({ spendReleased }, 'sweeper released stale spend reservations');
  const rebuildsEnqueued = options.rebuilds ? await enqueueWithdrawnRebuilds(options.rebuilds, options.log) : 0;
  const foldsEnqueued = await enqueueDueFolds(options);
  const toolRunsEnqueued = await enqueueToolRuns(options);
  await applyRetention(options);
  if (foldsEnqueued + threadsResumed + rebuildsEnqueued + toolRunsEnqueued > 0)
    options.log.info({ foldsEnqueued, threadsResumed, rebuildsEnqueued, toolRunsEnqueued }, 'sweeper caught up');
  return { foldsEnqueued, threadsResumed, toolRunsEnqueued };
}

/**
 * Derives pending work from Postgres, so nothing depends on an enqueue or a process having survived:
 * folds that a Redis outage kept from being enqueued, and turns whose process died (their lease expired): queued
 * ones are kicked, running ones recovered first (`interruptedTurns`).
 */
export function createSweeper(options: SweeperOptions): Sweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | null = null;
  const sweep = () => sweepOnce(options);
  return {
    sweep,
    start() {
      const tick = () => {
        if (running) return;
        running = sweep()
          .catch((error: unknown) => options.log.warn({ err: error }, 'sweep failed'))
          .finally(() => {
            running = null;
          });
      };
      tick();
      timer = setInterval(tick, options.intervalMs ?? 60_000);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
