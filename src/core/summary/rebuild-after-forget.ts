import { checkRetention, type ContextEntry } from '../context';
import { toThreadDto } from '../dto/api-dto';
import { isSummaryWithdrawn } from '../domain/types';
import type { SummaryStore, ThreadEventBus, ThreadStore, TranscriptStore, TurnStore } from '../ports';
import { appendSegments } from './append-segments';
import type { SummarizeDeps, SummarizerUsage } from './summarize-entries';
import { singleSegment, type SegmentedSummary } from './summary-segments';
import { assertUsableSummary } from './usable-summary';

export interface RebuildAfterForgetDeps extends SummarizeDeps {
  turns: Pick<TurnStore, 'loadContext'>;
  transcript: Pick<TranscriptStore, 'listSummarizableEntries'>;
  summaries: Pick<SummaryStore, 'commit'>;
  threads: Pick<ThreadStore, 'findThread'>;
  events: ThreadEventBus;
}

export type RebuildAfterForgetOutcome =
  { status: 'rebuilt'; revision: number; throughSeq: number; entries: number } | { status: 'skipped'; reason: string };

/** The summary committed when every message it covered was forgotten. */
export const NOTHING_LEFT_SUMMARY = 'Nothing to remember from earlier: the user deleted those messages.';

/** Attempts; each starts from the transcript again, never from text built before the thread changed. */
const MAX_ATTEMPTS = 3;

/** Raised when the thread kept changing: the job's backoff tries again later. */
export class RebuildRaceError extends Error {
  override name = 'RebuildRaceError';
}

/**
 * Rebuilds a summary withdrawn by a forget from the remaining transcript (forgotten and superseded messages are not
 * read): everything from the context start through the seq the summary covered, progressively in chunks like a
 * fold. The commit is a compare-and-set on the thread's version. Unlike an admin's rebuild, a lost race starts over
 * from the transcript instead of building on the text so far, since the change may have been another forget whose
 * message that text still holds. Skips when the summary is no longer withdrawn (another rebuild committed, or the
 * context was reset).
 */
export async function rebuildAfterForget(
  input: { threadId: string; signal?: AbortSignal },
  deps: RebuildAfterForgetDeps,
): Promise<RebuildAfterForgetOutcome> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const context = await deps.turns.loadContext(input.threadId);
    if (!context) return { status: 'skipped', reason: 'thread not found' };
    const { thread } = context;
    if (!isSummaryWithdrawn(thread) || !thread.summary)
      return { status: 'skipped', reason: 'the summary is not withdrawn' };
    const fromSeq = thread.contextStartSeq;
    const throughSeq = thread.summary.coveredThroughSeq;
    const started = Date.now();
    const usage: SummarizerUsage = { tokensIn: 0, tokensOut: 0 };
    const entries = (await deps.transcript.listSummarizableEntries({ threadId: thread.id, fromSeq, throughSeq })).map(
      (entry): ContextEntry => ({ ...entry, tokens: deps.settings.counter.countMessage(entry) }),
    );
    const { text, segmentEnds } =
      entries.length === 0
        ? singleSegment(NOTHING_LEFT_SUMMARY)
        : await summarize(
            {
              threadId: thread.id,
              entries,
              fromSeq,
              throughSeq,
              summaryPrompt: thread.settings.summaryPrompt,
              usage,
              ...(input.signal ? { signal: input.signal } : {}),
            },
            deps,
          );
    const retention = checkRetention({ folded: entries, summary: text });
    const tokens = deps.settings.counter.countText(text);
    const result = await deps.summaries.commit({
      threadId: thread.id,
      expectedVersion: thread.version,
      author: 'rebuild',
      authorId: null,
      text,
      segmentEnds,
      tokens,
      encoding: deps.settings.counter.encoding,
      fromSeq,
      throughSeq,
      // Unpinned entries the summary now covers leave the window, as after a fold.
      foldedSeqs: context.window.filter((entry) => entry.seq <= throughSeq).map((entry) => entry.seq),
      model: entries.length === 0 ? null : deps.summarizer.model,
      tokensIn: usage.tokensIn,
      tokensOut: usage.tokensOut,
      durationMs: Date.now() - started,
      identifiersKept: retention.kept,
      identifiersTotal: retention.total,
    });
    if (result.committed) {
      deps.events.publish({
        type: 'summary-updated',
        threadId: thread.id,
        revision: result.revision,
        coveredThroughSeq: throughSeq,
        tokens,
      });
      const updated = await deps.threads.findThread(thread.id, null);
      if (updated) deps.events.publish({ type: 'thread-updated', threadId: thread.id, thread: toThreadDto(updated) });
      deps.log.info(
        { threadId: thread.id, revision: result.revision, entries: entries.length, ms: Date.now() - started },
        'summary rebuilt after a forget',
      );
      return { status: 'rebuilt', revision: result.revision, throughSeq, entries: entries.length };
    }
    deps.log.info(
      { threadId: thread.id, attempt },
      'summary rebuild lost a compare-and-set race; starting over from the transcript',
    );
  }
  throw new RebuildRaceError('the thread kept changing during the summary rebuild; it will be retried');
}

/** The remaining transcript summarized from scratch, as segments (consolidated when over the cap). */
async function summarize(
  input: {
    threadId: string;
    entries: ContextEntry[];
    fromSeq: number;
    throughSeq: number;
    summaryPrompt: string | undefined;
    usage: SummarizerUsage;
    signal?: AbortSignal;
  },
  deps: RebuildAfterForgetDeps,
): Promise<SegmentedSummary> {
  const call = { threadId: input.threadId, usage: input.usage, ...(input.signal ? { signal: input.signal } : {}) };
  const { summary } = await appendSegments(
    {
      ...call,
      previous: null,
      folded: input.entries,
      fromSeq: input.fromSeq,
      contextStartSeq: input.fromSeq,
      summaryPrompt: input.summaryPrompt,
      // The whole summary at once, as much as the folds it replaces held: a fold's share would drop most of it.
      segmentTokens: deps.settings.summaryMaxTokens,
    },
    deps,
  );
  assertUsableSummary(summary.text);
  return summary;
}
