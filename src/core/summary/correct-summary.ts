import type { ContextSettings } from '../thread-context/context-settings';
import { AppError } from '../errors/app-error';
import type { SummaryStore, ThreadEventBus, TurnStore } from '../ports';

export interface CorrectSummaryDeps {
  turns: Pick<TurnStore, 'loadContext'>;
  summaries: Pick<SummaryStore, 'commit'>;
  events: Pick<ThreadEventBus, 'publish'>;
  settings: Pick<ContextSettings, 'counter' | 'summaryMaxTokens'>;
}

const MAX_COMMIT_ATTEMPTS = 3;

/**
 * An admin's correction of a thread's summary: a new revision authored `admin` with the same coverage
 * ([contextStart, coveredThrough]); it becomes the thread's summary, so later folds build on it. Compare-and-set:
 * when the summary changed since it was read (a fold committed, or `expectedRevision` is stale) it is a CONFLICT,
 * so an admin never overwrites text they have not seen.
 */
export async function correctSummary(
  input: { threadId: string; text: string; actorId: string; expectedRevision?: number },
  deps: CorrectSummaryDeps,
): Promise<{ revision: number; tokens: number; fromSeq: number; throughSeq: number }> {
  const text = input.text.trim();
  if (text.length === 0) throw new AppError('VALIDATION', 'The summary text is empty.');
  const tokens = deps.settings.counter.countText(text);
  if (tokens > deps.settings.summaryMaxTokens) {
    throw new AppError(
      'TOO_LARGE',
      `The summary has ${tokens} tokens; the cap (SUMMARY_MAX_TOKENS) is ${deps.settings.summaryMaxTokens}.`,
    );
  }
  let seenRevision = input.expectedRevision;
  for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt += 1) {
    const context = await deps.turns.loadContext(input.threadId);
    if (!context) throw new AppError('NOT_FOUND', 'No such thread.');
    const summary = context.thread.summary;
    if (!summary || summary.revision === 0)
      throw new AppError('CONFLICT', 'The thread has no summary yet: nothing to correct.');
    if (seenRevision !== undefined && seenRevision !== summary.revision) {
      throw new AppError(
        'CONFLICT',
        `The summary changed meanwhile (now revision ${summary.revision}); reload it and correct again.`,
      );
    }
    seenRevision = summary.revision;
    const fromSeq = context.thread.contextStartSeq;
    const result = await deps.summaries.commit({
      threadId: input.threadId,
      expectedVersion: context.thread.version,
      author: 'admin',
      authorId: input.actorId,
      // An admin's edit may rewrite the whole text: it is a consolidation, one segment.
      text,
      segmentEnds: [text.length],
      tokens,
      encoding: deps.settings.counter.encoding,
      fromSeq,
      throughSeq: summary.coveredThroughSeq,
      foldedSeqs: [],
      model: null,
      tokensIn: null,
      tokensOut: null,
      durationMs: null,
      identifiersKept: null,
      identifiersTotal: null,
    });
    if (result.committed) {
      deps.events.publish({
        type: 'summary-updated',
        threadId: input.threadId,
        revision: result.revision,
        coveredThroughSeq: summary.coveredThroughSeq,
        tokens,
      });
      return { revision: result.revision, tokens, fromSeq, throughSeq: summary.coveredThroughSeq };
    }
  }
  throw new AppError('CONFLICT', 'The thread kept changing; try again.');
}
