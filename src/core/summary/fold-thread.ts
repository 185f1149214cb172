import { planFold, type ContextEntry, type ContextState } from '../context';
import { shouldFold } from '../context';
import {
  contextStateOf,
  estimateFactor,
  packBudget,
  policiesFor,
  type ContextSettings,
} from '../thread-context/context-settings';
import type { ThreadContext } from '../domain/types';
import type { LogPort, ModelCallStore, SummarizerPort, SummaryStore, ThreadEventBus, TurnStore } from '../ports';
import { appendSegments } from './append-segments';
import { writeCallRecords, type DeferredRecord } from './summarize-entries';
import { segmentedSummary } from './summary-segments';
import { isSummaryWithdrawn } from '../domain/types';
import { assertUsableSummary } from './usable-summary';
import type { ChatPrefix } from '../context/types';

export interface FoldDeps {
  turns: Pick<TurnStore, 'loadContext'>;
  summaries: SummaryStore;
  summarizer: SummarizerPort;
  calls: ModelCallStore;
  events: ThreadEventBus;
  settings: ContextSettings;
  log: LogPort;
  /**
   * The thread's chat prompt as its next call would send it (the turn runner's, with its tool list), for a fold that
   * continues it (see continued-fold-prompt.ts); null when it cannot be built. Absent: every fold is stand-alone
   * (FOLD_PROMPT=standalone, a summarizer model other than the chat model, the offline model).
   */
  chatPrefix?: (context: ThreadContext) => ChatPrefix | null;
}

export type FoldOutcome =
  | {
      status: 'folded';
      revision: number;
      foldedEntries: number;
      throughSeq: number;
      /** The summarizer's tokens for this fold (its calls, all attempts included). */
      usage: { tokensIn: number; tokensOut: number };
    }
  | { status: 'skipped'; reason: string }
  /** An idle fold of a thread active less than `quietMs` ago: to try again at `at`. */
  | { status: 'not-idle'; at: Date };

/**
 * A fold of an idle thread (the prompt cache has gone cold, so it invalidates nothing): no trigger needed, but only
 * once the thread has been quiet `quietMs` (PROMPT_CACHE_TTL) and when what it would fold beyond the keep policy
 * comes to at least `minTokens` (IDLE_FOLD_MIN_TOKENS).
 */
export interface IdleFold {
  quietMs: number;
  minTokens: number;
  now: Date;
}

/** Attempts at the compare-and-set commit before giving up (another fold keeps winning). */
const MAX_COMMIT_ATTEMPTS = 3;

/**
 * Folds the entries that fell out of the window into the summary: plans the cut with the core, appends a segment
 * for the folded span (the earlier segments stay byte-identical, so the cached prompt prefix survives), checks that
 * identifiers survived, consolidates the segments when they outgrow the cap, and commits with compare-and-set on the thread's version. Safe to run twice or concurrently:
 * a commit that lost the race re-plans from the new state, so no entry is folded twice or lost.
 */
export async function foldThread(input: FoldInput, deps: FoldDeps): Promise<FoldOutcome> {
  // The summarizer calls are recorded once the fold is committed and announced (or has failed): the records'
  // prompt counts and inserts are not what a tab waits for.
  const deferredRecords: DeferredRecord[] = [];
  try {
    return await foldOnce(input, deps, deferredRecords);
  } finally {
    await writeCallRecords(deferredRecords);
  }
}

type FoldInput = {
  threadId: string;
  author?: 'fold' | 'overflow-fallback';
  force?: boolean;
  idle?: IdleFold;
  signal?: AbortSignal;
};

/** Why an idle fold does not run now: the thread was active too recently, or folding would not be worth it. */
function idleVerdict(input: {
  idle: IdleFold;
  lastActivityAt: Date;
  folded: readonly { tokens: number }[];
}): FoldOutcome | null {
  const quietUntil = input.lastActivityAt.getTime() + input.idle.quietMs;
  if (quietUntil > input.idle.now.getTime()) return { status: 'not-idle', at: new Date(quietUntil) };
  const tokens = input.folded.reduce((sum, entry) => sum + entry.tokens, 0);
  if (tokens < input.idle.minTokens)
    return {
      status: 'skipped',
      reason: `an idle fold of ${tokens} tokens is not worth it (IDLE_FOLD_MIN_TOKENS ${input.idle.minTokens})`,
    };
  return null;
}

const continuable = (input: FoldInput): boolean => !input.idle && input.author !== 'overflow-fallback';

/**
 * The chat prefix a fold continues. Not for an idle fold (the cache has gone cold, and the stand-alone prompt is the
 * shorter one) nor for an overflow's fold (the chat's prompt no longer fits).
 */
function continuedPrefix(
  input: FoldInput,
  context: ThreadContext,
  deps: FoldDeps,
): { prefix: ChatPrefix; maxPromptTokens: number } | null {
  if (!deps.chatPrefix || !continuable(input)) return null;
  const prefix = deps.chatPrefix(context);
  return prefix ? { prefix, maxPromptTokens: packBudget(deps.settings) } : null;
}

async function foldOnce(input: FoldInput, deps: FoldDeps, deferredRecords: DeferredRecord[]): Promise<FoldOutcome> {
  for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt += 1) {
    const planned = await planAttempt(input, deps);
    if ('status' in planned) return planned;
    const outcome = await summarizeAndCommit({ input, planned, attempt, deferredRecords }, deps);
    // Null: the commit lost a compare-and-set race; re-plan from the new state.
    if (outcome) return outcome;
  }
  return { status: 'skipped', reason: 'the thread kept changing; a later fold will catch up' };
}

/** What one attempt of a fold folds: the thread as read, its context state and the entries the plan folds. */
interface PlannedFold {
  context: ThreadContext;
  state: ContextState;
  folded: ContextEntry[];
  /** The newest folded entry. */
  last: ContextEntry;
}

/** Reads the thread and plans the cut; the outcome instead when this fold does not run (skipped, not idle). */
async function planAttempt(input: FoldInput, deps: FoldDeps): Promise<FoldOutcome | PlannedFold> {
  const { settings } = deps;
  // A fold that continues the chat's prompt reads what that prompt shows (saved memories, held recall notes).
  const context = await deps.turns.loadContext(
    input.threadId,
    deps.chatPrefix && continuable(input) ? { promptParts: true } : undefined,
  );
  if (!context) return { status: 'skipped', reason: 'thread not found' };
  const state = contextStateOf(context, settings);
  if (state.memoryMode === 'window-only') return { status: 'skipped', reason: 'window-only thread' };
  // A forget withdrew the summary: its rebuild from the transcript comes first (folding onto the note would lose it).
  if (isSummaryWithdrawn(context.thread)) return { status: 'skipped', reason: 'the summary is being rebuilt' };
  const { trigger, keep } = policiesFor(context, settings);
  const triggered = input.force || shouldFold(state, trigger, settings.profile, estimateFactor(settings)).fold;
  if (!triggered && !input.idle) return { status: 'skipped', reason: 'trigger not reached' };
  const plan = planFold({ window: state.window, keep, profile: settings.profile });
  const folded = plan.folded;
  const last = folded.at(-1);
  if (!last) return { status: 'skipped', reason: 'the window already fits the keep policy' };
  // A due trigger folds anyway; otherwise an idle fold runs only on a quiet thread, and only when it is worth it.
  const verdict =
    !triggered && input.idle
      ? idleVerdict({ idle: input.idle, lastActivityAt: context.thread.lastActivityAt, folded })
      : null;
  if (verdict) return verdict;
  return { context, state, folded, last };
}

/**
 * Appends the planned span's segment to the summary and commits it with compare-and-set on the thread's version,
 * then announces it; null when the commit lost the race.
 */
async function summarizeAndCommit(
  given: { input: FoldInput; planned: PlannedFold; attempt: number; deferredRecords: DeferredRecord[] },
  deps: FoldDeps,
): Promise<FoldOutcome | null> {
  const { input, planned, attempt, deferredRecords } = given;
  const { context, state, folded, last } = planned;
  const { settings } = deps;
  const started = Date.now();
  const fromSeq = state.summary ? state.summary.coveredThroughSeq + 1 : state.contextStartSeq;
  const usage = { tokensIn: 0, tokensOut: 0 };
  const call = { threadId: input.threadId, usage, signal: input.signal, deferredRecords };
  const previous = state.summary ? segmentedSummary(state.summary.text, state.summary.segmentEnds) : null;
  const appended = await appendSegments(
    {
      ...call,
      previous,
      folded,
      fromSeq,
      contextStartSeq: state.contextStartSeq,
      summaryPrompt: context.thread.settings.summaryPrompt,
      chatPrefix: continuedPrefix(input, context, deps),
    },
    deps,
  );
  const { text, segmentEnds } = appended.summary;
  assertUsableSummary(text);
  const tokens = settings.counter.countText(text);

  const result = await deps.summaries.commit({
    threadId: input.threadId,
    expectedVersion: context.thread.version,
    author: input.author ?? 'fold',
    text,
    segmentEnds,
    tokens,
    encoding: settings.counter.encoding,
    fromSeq,
    throughSeq: last.seq,
    foldedSeqs: folded.map((entry) => entry.seq),
    model: deps.summarizer.model,
    tokensIn: usage.tokensIn,
    tokensOut: usage.tokensOut,
    durationMs: Date.now() - started,
    identifiersKept: appended.kept,
    identifiersTotal: appended.total,
  });
  if (!result.committed) {
    deps.log.info({ threadId: input.threadId, attempt }, 'fold lost a compare-and-set race; re-planning');
    return null;
  }
  deps.events.publish({
    type: 'summary-updated',
    threadId: input.threadId,
    revision: result.revision,
    coveredThroughSeq: last.seq,
    tokens,
  });
  deps.log.info(
    {
      threadId: input.threadId,
      revision: result.revision,
      folded: folded.length,
      throughSeq: last.seq,
      segments: segmentEnds.length,
      consolidated: appended.consolidated,
      ms: Date.now() - started,
    },
    'fold committed',
  );
  return {
    status: 'folded',
    revision: result.revision,
    foldedEntries: folded.length,
    throughSeq: last.seq,
    usage: { ...usage },
  };
}
