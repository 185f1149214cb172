import { checkRetention, type ContextEntry } from '../context';
import type { SummaryStore, ThreadEventBus, TranscriptStore, TurnStore } from '../ports';
import { appendSegments } from './append-segments';
import type { SummarizeDeps, SummarizerUsage } from './summarize-entries';
import type { SegmentedSummary } from './summary-segments';
import { isSummaryWithdrawn } from '../domain/types';
import { assertUsableSummary } from './usable-summary';

export interface RebuildDeps extends SummarizeDeps {
  turns: Pick<TurnStore, 'loadContext'>;
  transcript: Pick<TranscriptStore, 'listSummarizableEntries'>;
  summaries: Pick<SummaryStore, 'commit'>;
  events: Pick<ThreadEventBus, 'publish'>;
}

export type RebuildOutcome =
  | { status: 'rebuilt'; revision: number; fromSeq: number; throughSeq: number; entries: number }
  | { status: 'skipped'; reason: string };

/** Commit attempts; between two, the folds that committed meanwhile are summarized on top of the rebuilt text. */
const MAX_COMMIT_ATTEMPTS = 4;

async function entriesBetween(
  deps: RebuildDeps,
  input: { threadId: string; fromSeq: number; throughSeq: number },
): Promise<ContextEntry[]> {
  const entries = await deps.transcript.listSummarizableEntries(input);
  // Counted with the deployment's counter, like window entries (the stored count may use another encoding).
  return entries.map((entry) => ({ ...entry, tokens: deps.settings.counter.countMessage(entry) }));
}

interface Rebuilt {
  summary: SegmentedSummary;
  throughSeq: number;
  entries: ContextEntry[];
}

/** Summarizes `entries` (seqs fromSeq..) as segments after `previous`; consolidated when over the cap. */
async function summarizeRange(
  input: {
    threadId: string;
    previous: SegmentedSummary | null;
    entries: ContextEntry[];
    fromSeq: number;
    contextStartSeq: number;
    summaryPrompt: string | undefined;
    usage: SummarizerUsage;
    signal?: AbortSignal;
  },
  deps: RebuildDeps,
): Promise<SegmentedSummary> {
  const call = { threadId: input.threadId, usage: input.usage, ...(input.signal ? { signal: input.signal } : {}) };
  const appended = await appendSegments(
    {
      ...call,
      previous: input.previous,
      folded: input.entries,
      fromSeq: input.fromSeq,
      contextStartSeq: input.contextStartSeq,
      summaryPrompt: input.summaryPrompt,
    },
    deps,
  );
  return appended.summary;
}

/**
 * Rebuilds a thread's summary from the transcript from scratch (e.g. after the summary model or prompt changed):
 * summarizes every message from the context start through the seq the summary covers, progressively in chunks
 * like a fold, and commits it as a new revision authored `rebuild` covering [contextStart, coveredThrough]. Nothing
 * leaves the window. The commit is a compare-and-set: when a fold committed meanwhile, the newly covered messages
 * are summarized on top of the rebuilt text and the commit is tried again, so no folded message is lost.
 */
export async function rebuildSummary(
  input: { threadId: string; actorId: string; signal?: AbortSignal },
  deps: RebuildDeps,
): Promise<RebuildOutcome> {
  let context = await deps.turns.loadContext(input.threadId);
  if (!context) return { status: 'skipped', reason: 'thread not found' };
  const fromSeq = context.thread.contextStartSeq;
  const covered = context.thread.summary?.coveredThroughSeq ?? 0;
  if (!context.thread.summary || context.thread.summary.revision === 0 || covered < fromSeq)
    return { status: 'skipped', reason: 'nothing is summarized yet' };

  const started = Date.now();
  const usage: SummarizerUsage = { tokensIn: 0, tokensOut: 0 };
  const common = {
    threadId: input.threadId,
    contextStartSeq: fromSeq,
    summaryPrompt: context.thread.settings.summaryPrompt,
    usage,
    ...(input.signal ? { signal: input.signal } : {}),
  };
  const entries = await entriesBetween(deps, { threadId: input.threadId, fromSeq, throughSeq: covered });
  if (entries.length === 0) return { status: 'skipped', reason: 'the covered messages are gone from the transcript' };
  const rebuilt: Rebuilt = {
    summary: await summarizeRange({ ...common, previous: null, entries, fromSeq }, deps),
    throughSeq: covered,
    entries,
  };

  for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt += 1) {
    const outcome = await commitRebuilt(
      { input, rebuilt, expectedVersion: context.thread.version, fromSeq, started, usage },
      deps,
    );
    if (outcome) return outcome;
    context = await deps.turns.loadContext(input.threadId);
    if (!context) return { status: 'skipped', reason: 'thread not found' };
    if (context.thread.contextStartSeq !== fromSeq)
      return { status: 'skipped', reason: 'the context was reset during the rebuild' };
    // A message was forgotten meanwhile: the text built so far may hold it; the forget's own rebuild takes over.
    if (isSummaryWithdrawn(context.thread))
      return { status: 'skipped', reason: 'a message was forgotten during the rebuild' };
    await catchUp(rebuilt, { ...common, nowCovered: context.thread.summary?.coveredThroughSeq ?? 0 }, deps);
  }
  return { status: 'skipped', reason: 'the thread kept changing; try again' };
}

/**
 * Commits the rebuilt text as a new revision authored `rebuild` (compare-and-set on `expectedVersion`) and announces
 * it; null when a fold committed meanwhile.
 */
async function commitRebuilt(
  given: {
    input: { threadId: string; actorId: string };
    rebuilt: Rebuilt;
    expectedVersion: number;
    fromSeq: number;
    started: number;
    usage: SummarizerUsage;
  },
  deps: RebuildDeps,
): Promise<RebuildOutcome | null> {
  const { input, rebuilt, fromSeq, started, usage } = given;
  const { text, segmentEnds } = rebuilt.summary;
  assertUsableSummary(text);
  const retention = checkRetention({ folded: rebuilt.entries, summary: text });
  const tokens = deps.settings.counter.countText(text);
  const result = await deps.summaries.commit({
    threadId: input.threadId,
    expectedVersion: given.expectedVersion,
    author: 'rebuild',
    authorId: input.actorId,
    text,
    segmentEnds,
    tokens,
    encoding: deps.settings.counter.encoding,
    fromSeq,
    throughSeq: rebuilt.throughSeq,
    foldedSeqs: [],
    model: deps.summarizer.model,
    tokensIn: usage.tokensIn,
    tokensOut: usage.tokensOut,
    durationMs: Date.now() - started,
    identifiersKept: retention.kept,
    identifiersTotal: retention.total,
  });
  if (!result.committed) return null;
  deps.events.publish({
    type: 'summary-updated',
    threadId: input.threadId,
    revision: result.revision,
    coveredThroughSeq: rebuilt.throughSeq,
    tokens,
  });
  deps.log.info(
    {
      threadId: input.threadId,
      revision: result.revision,
      entries: rebuilt.entries.length,
      ms: Date.now() - started,
    },
    'summary rebuilt',
  );
  return {
    status: 'rebuilt',
    revision: result.revision,
    fromSeq,
    throughSeq: rebuilt.throughSeq,
    entries: rebuilt.entries.length,
  };
}

/** Summarizes the messages a fold covered while the rebuild ran on top of the rebuilt text. */
async function catchUp(
  rebuilt: Rebuilt,
  input: {
    threadId: string;
    nowCovered: number;
    contextStartSeq: number;
    summaryPrompt: string | undefined;
    usage: SummarizerUsage;
    signal?: AbortSignal;
  },
  deps: RebuildDeps,
): Promise<void> {
  if (input.nowCovered <= rebuilt.throughSeq) return;
  const delta = await entriesBetween(deps, {
    threadId: input.threadId,
    fromSeq: rebuilt.throughSeq + 1,
    throughSeq: input.nowCovered,
  });
  if (delta.length > 0) {
    rebuilt.summary = await summarizeRange(
      { ...input, previous: rebuilt.summary, entries: delta, fromSeq: rebuilt.throughSeq + 1 },
      deps,
    );
    rebuilt.entries = [...rebuilt.entries, ...delta];
  }
  rebuilt.throughSeq = input.nowCovered;
}
