import {
  buildSummarizerInputs,
  checkRetention,
  DEFAULT_SEGMENT_PROMPT,
  filterCitations,
  renderSummaryPrompt,
} from '../context';
import type { ContextEntry, PackMessage, SummaryPromptTemplate } from '../context';
import { continuedFoldMessages } from './continued-fold-prompt';
import { UnusableSummaryError } from './usable-summary';
import { isModelCallError } from '../errors/model-call-error';
import { consolidateSummaryMessages, retentionRetryMessages } from './revision-prompts';
import { asPackMessages, callSummarizer, type CallInput, type SummarizeDeps } from './summarize-entries';
import { appendSegment, keepSegments, segmentsOf, singleSegment, type SegmentedSummary } from './summary-segments';
import type { ChatPrefix } from '../context/types';

/**
 * A segment's share of the summary cap: a fold's segment is asked for at most a quarter of SUMMARY_MAX_TOKENS, so
 * three or four folds append before the segments outgrow the cap and one consolidation rewrites them.
 */
export const SEGMENT_SHARE = 0.25;
/** A consolidation's share of the cap: half of it, so the next folds have room to append again. */
export const CONSOLIDATION_SHARE = 0.5;

/**
 * The fewest tokens a fold's segment is asked for where the cap allows (half of it at most): a quarter of a small cap
 * (the offline demo's 153 tokens) leaves room for one or two sentences a fold, too few to hold what the fold settled.
 */
export const MIN_SEGMENT_TOKENS = 100;

/** The most tokens one fold's segment is asked for: a quarter of the cap, at least min(MIN_SEGMENT_TOKENS, half). */
export function segmentMaxTokens(summaryMaxTokens: number): number {
  const floor = Math.min(MIN_SEGMENT_TOKENS, Math.floor(summaryMaxTokens * CONSOLIDATION_SHARE));
  return Math.max(1, Math.floor(summaryMaxTokens * SEGMENT_SHARE), floor);
}

/** The thread's segment template: its own summary prompt as the system message when set, else the default. */
export function segmentTemplateFor(summaryPrompt: string | undefined): SummaryPromptTemplate {
  return summaryPrompt ? { ...DEFAULT_SEGMENT_PROMPT, system: summaryPrompt } : DEFAULT_SEGMENT_PROMPT;
}

export interface AppendSegmentsInput extends CallInput {
  /** The summary before this fold (null or empty text: none). */
  previous: SegmentedSummary | null;
  /** The entries to summarize, ascending seq. */
  folded: ContextEntry[];
  /** First seq the new text covers. */
  fromSeq: number;
  /** The context start: citations before it are removed. */
  contextStartSeq: number;
  /** The thread's own summary prompt; it applies to each segment and to a consolidation. */
  summaryPrompt: string | undefined;
  /**
   * The thread's chat prompt as its next call would send it: when given, and the fold is one chunk that the prefix
   * holds within `maxPromptTokens`, the segment is asked for by continuing it (continued-fold-prompt.ts), so a
   * provider's prompt cache bills the fold's prompt as the chat calls' cached prefix.
   */
  chatPrefix?: { prefix: ChatPrefix; maxPromptTokens: number } | null;
  /**
   * The most tokens each new segment is asked for; default segmentMaxTokens(SUMMARY_MAX_TOKENS). A rebuild writes the
   * whole summary at once and asks for up to the cap.
   */
  segmentTokens?: number;
}

export interface AppendSegmentsResult {
  summary: SegmentedSummary;
  /** Whether a consolidation rewrote the earlier segments (the only time their text changes). */
  consolidated: boolean;
  /** Identifiers of the folded entries the summary holds. */
  kept: number;
  total: number;
}

/**
 * Summarizes `folded` as new segments after `previous`: one segment per summarizer chunk (usually one per fold),
 * each written with the summary so far as read-only context, so the earlier segments stay byte-identical. Then the
 * checked commit's identifier re-ask (it rewrites only the new segments), and when the segments outgrow
 * SUMMARY_MAX_TOKENS, one consolidation rewrites them all into one segment.
 */
export async function appendSegments(input: AppendSegmentsInput, deps: SummarizeDeps): Promise<AppendSegmentsResult> {
  const { settings } = deps;
  const previous = input.previous && input.previous.text !== '' ? input.previous : null;
  const template = segmentTemplateFor(input.summaryPrompt);
  const segmentCap = input.segmentTokens ?? segmentMaxTokens(settings.summaryMaxTokens);
  const chunks = summarizerChunks({ input, previous, template, segmentCap }, deps);
  let summary = previous;
  /** How many segments at the front are the earlier summary's, untouched. */
  let untouched = previous?.segmentEnds.length ?? 0;
  let consolidated = false;
  const continued = chunks.length === 1 ? continuedMessages(input, template, segmentCap, deps) : null;
  for (const [index, chunk] of chunks.entries()) {
    // Later chunks reserve only the cap for the summary so far: a summary over it is consolidated first.
    if (index > 0 && summary && settings.counter.countText(summary.text) > settings.summaryMaxTokens) {
      summary = await consolidate({ ...input, summary, throughSeq: chunk.fromSeq - 1 }, deps);
      untouched = 0;
      consolidated = true;
    }
    const segment = await writeSegment({ input, chunk, earlier: summary, continued, template, segmentCap }, deps);
    summary = appendSegment(
      summary,
      filterCitations({ summary: segment, fromSeq: input.contextStartSeq, throughSeq: chunk.throughSeq }),
    );
  }
  if (!summary) return { summary: singleSegment(''), consolidated, kept: 0, total: 0 };
  summary = await reaskMissing({ ...input, summary, untouched }, deps);
  if (settings.counter.countText(summary.text) > settings.summaryMaxTokens) {
    summary = await consolidate({ ...input, summary, throughSeq: input.folded.at(-1)?.seq ?? input.fromSeq }, deps);
    consolidated = true;
  }
  const retention = checkRetention({ folded: input.folded, summary: summary.text });
  return { summary, consolidated, kept: retention.kept, total: retention.total };
}

type SummarizerChunk = ReturnType<typeof buildSummarizerInputs>[number];

/** The folded entries in chunks the summarizer's input holds, each with the summary so far and the prompt's overhead. */
function summarizerChunks(
  given: {
    input: AppendSegmentsInput;
    previous: SegmentedSummary | null;
    template: SummaryPromptTemplate;
    segmentCap: number;
  },
  deps: SummarizeDeps,
): SummarizerChunk[] {
  const { input, previous, template, segmentCap } = given;
  const { settings } = deps;
  const overheadTokens = settings.counter.countPack(
    asPackMessages(
      renderSummaryPrompt({
        previousSummary: null,
        entries: [],
        maxTokens: segmentCap,
        fromSeq: input.fromSeq,
        throughSeq: input.fromSeq,
        template,
      }),
    ),
  );
  return buildSummarizerInputs({
    summary: previous
      ? {
          text: previous.text,
          tokens: settings.counter.countText(previous.text),
          coveredThroughSeq: input.fromSeq - 1,
          revision: 0,
        }
      : null,
    folded: input.folded,
    budget: settings.summarizerInputMaxTokens,
    summaryMaxTokens: settings.summaryMaxTokens,
    overheadTokens,
    counter: settings.counter,
  });
}

/**
 * One chunk's segment: asked for by continuing the chat's prompt when `continued` is given (falling back to the
 * stand-alone prompt once when that gets no usable summary), else with the stand-alone prompt after `earlier`.
 */
async function writeSegment(
  given: {
    input: AppendSegmentsInput;
    chunk: SummarizerChunk;
    earlier: SegmentedSummary | null;
    continued: PackMessage[] | null;
    template: SummaryPromptTemplate;
    segmentCap: number;
  },
  deps: SummarizeDeps,
): Promise<string> {
  const { input, chunk, earlier, continued, template, segmentCap } = given;
  const standalone = () =>
    callSummarizer(
      {
        ...input,
        purpose: 'summary',
        messages: asPackMessages(
          renderSummaryPrompt({
            previousSummary: earlier?.text ?? null,
            entries: chunk.entries,
            maxTokens: segmentCap,
            fromSeq: input.fromSeq,
            throughSeq: chunk.throughSeq,
            template,
          }),
        ),
      },
      deps,
    );
  return continued
    ? await callSummarizer(
        { ...input, messages: continued, tools: input.chatPrefix?.prefix.tools ?? [], purpose: 'summary' },
        deps,
      ).catch((error: unknown) => {
        // A model that answers the task with no summary (a tool call, an apology), or an endpoint that refuses the
        // request's shape, gets the stand-alone prompt once: the fold must not stall on the cheaper form.
        if (!(error instanceof UnusableSummaryError) && !(isModelCallError(error) && error.kind === 'bad_request'))
          throw error;
        deps.log.warn(
          { threadId: input.threadId, err: error },
          'a fold continuing the chat prompt got no usable summary; asking with the stand-alone prompt',
        );
        return standalone();
      })
    : await standalone();
}

/** The continued fold's messages when the chat's prefix can carry this fold within its prompt limit, else null. */
function continuedMessages(
  input: AppendSegmentsInput,
  template: SummaryPromptTemplate,
  segmentCap: number,
  deps: SummarizeDeps,
): PackMessage[] | null {
  const given = input.chatPrefix;
  if (!given) return null;
  const messages = continuedFoldMessages({
    prefix: given.prefix,
    folded: input.folded,
    template,
    fromSeq: input.fromSeq,
    maxTokens: segmentCap,
    earlierSummary: input.previous !== null && input.previous.text !== '',
    measure: (message) => deps.settings.counter.countMessage(message),
  });
  if (!messages) return null;
  const task = messages.at(-1)?.tokens ?? 0;
  // The budget already leaves the answer's reserve free.
  return given.prefix.tokens + task <= given.maxPromptTokens ? messages : null;
}

/** The identifier re-ask: the new segments are written again once, listing what the summary lost; kept when better. */
async function reaskMissing(
  input: AppendSegmentsInput & { summary: SegmentedSummary; untouched: number },
  deps: SummarizeDeps,
): Promise<SegmentedSummary> {
  const first = checkRetention({ folded: input.folded, summary: input.summary.text });
  if (first.missingVerbatim.length === 0) return input.summary;
  const earlier = keepSegments(input.summary, input.untouched);
  const fresh = segmentsOf(input.summary).slice(input.untouched).join('\n');
  const revisedSegment = await callSummarizer(
    {
      ...input,
      purpose: 'summary',
      messages: asPackMessages(
        retentionRetryMessages({
          summary: fresh,
          missing: first.missingVerbatim,
          maxTokens: input.segmentTokens ?? segmentMaxTokens(deps.settings.summaryMaxTokens),
        }),
      ),
    },
    deps,
  );
  const lastSeq = input.folded.at(-1)?.seq ?? input.fromSeq;
  const revised = appendSegment(
    earlier,
    filterCitations({ summary: revisedSegment, fromSeq: input.contextStartSeq, throughSeq: lastSeq }),
  );
  const second = checkRetention({ folded: input.folded, summary: revised.text });
  return second.kept >= first.kept ? revised : input.summary;
}

/**
 * One consolidation: every segment rewritten into one, in at most half the cap (so later folds can append again);
 * a result still over the cap is cut at it as a last resort.
 */
export async function consolidate(
  input: CallInput & {
    summary: SegmentedSummary;
    summaryPrompt: string | undefined;
    contextStartSeq: number;
    throughSeq: number;
  },
  deps: SummarizeDeps,
): Promise<SegmentedSummary> {
  const { counter, summaryMaxTokens } = deps.settings;
  const target = Math.max(1, Math.floor(summaryMaxTokens * CONSOLIDATION_SHARE));
  const messages = consolidateSummaryMessages({
    summary: input.summary.text,
    maxTokens: target,
    summaryPrompt: input.summaryPrompt,
  });
  let text = await callSummarizer({ ...input, messages: asPackMessages(messages), purpose: 'summary' }, deps);
  if (counter.countText(text) > summaryMaxTokens) {
    while (text.length > 0 && counter.countText(text) > summaryMaxTokens - 8)
      text = text.slice(0, Math.floor(text.length * 0.9));
    text = `${text.trimEnd()} […]`;
  }
  return singleSegment(
    filterCitations({ summary: text, fromSeq: input.contextStartSeq, throughSeq: input.throughSeq }),
  );
}
