import { buildSummarizerInputs, checkRetention, DEFAULT_SUMMARY_PROMPT, renderSummaryPrompt } from '../context';
import type { ContextEntry, PackMessage } from '../context';
import type { ContextSettings } from '../thread-context/context-settings';
import type { LogPort, ModelCallStore, SummarizerPort } from '../ports';
import { condenseSummaryMessages, retentionRetryMessages } from './revision-prompts';
import { assertUsableSummary } from './usable-summary';
import type { OpenAIFunctionTool } from '../context/types';

/** What summarizing needs: the summarizer, where its calls are recorded, the settings and a log. */
export interface SummarizeDeps {
  summarizer: SummarizerPort;
  calls: ModelCallStore;
  settings: ContextSettings;
  log: LogPort;
}

/** Summarizer usage, summed over the calls of one fold or rebuild. */
export interface SummarizerUsage {
  tokensIn: number;
  tokensOut: number;
}

export interface CallInput {
  threadId: string;
  usage: SummarizerUsage;
  signal?: AbortSignal;
  /**
   * Where the calls' records go when the caller writes them later (`writeCallRecords`), off its critical path:
   * the estimate counts the whole prompt (a few ms for a long one) and the insert is a round trip. Without it each
   * record is written right after its call.
   */
  deferredRecords?: DeferredRecord[];
}

/** A call record still to be counted and written; it logs its own failure and never rejects. */
export type DeferredRecord = () => Promise<void>;

/** Writes the deferred records (concurrently) and empties the list. */
export async function writeCallRecords(records: DeferredRecord[]): Promise<void> {
  await Promise.all(records.splice(0).map((write) => write()));
}

/** The thread's summary prompt template: its own system prompt when set, else the default. */
export function summaryTemplateFor(summaryPrompt: string | undefined): typeof DEFAULT_SUMMARY_PROMPT {
  return summaryPrompt ? { ...DEFAULT_SUMMARY_PROMPT, system: summaryPrompt } : DEFAULT_SUMMARY_PROMPT;
}

/** One summarizer call, recorded with its usage; its answer trimmed (throws UnusableSummaryError on garbage). */
export async function callSummarizer(
  input: CallInput & { messages: PackMessage[]; purpose: 'summary'; tools?: OpenAIFunctionTool[] },
  deps: SummarizeDeps,
): Promise<string> {
  const started = Date.now();
  // With the chat's tools (a continued fold), the same list goes with `tool_choice: none` and the thread's cache key.
  const continued = input.tools && input.tools.length > 0 ? { tools: input.tools, toolChoice: 'none' as const } : {};
  const result = await deps.summarizer.summarize({
    messages: input.messages,
    ...(input.signal ? { signal: input.signal } : {}),
    ...continued,
    cacheKey: input.threadId,
  });
  const latencyMs = Date.now() - started;
  let estimated: number | null = null;
  const estimate = () =>
    (estimated ??=
      deps.settings.counter.countPack(input.messages) +
      (input.tools && input.tools.length > 0 ? deps.settings.counter.countToolSchemas(input.tools) : 0));
  input.usage.tokensIn += result.usage?.promptTokens ?? estimate();
  input.usage.tokensOut += result.usage?.completionTokens ?? deps.settings.counter.countText(result.text);
  const record: DeferredRecord = () =>
    deps.calls
      .record({
        threadId: input.threadId,
        messageId: null,
        purpose: input.purpose,
        model: deps.summarizer.model,
        estimatedPromptTokens: estimate(),
        reportedPromptTokens: result.usage?.promptTokens ?? null,
        reportedCompletionTokens: result.usage?.completionTokens ?? null,
        reportedCachedTokens: result.usage?.cachedTokens ?? null,
        reportedCacheWriteTokens: result.usage?.cacheWriteTokens ?? null,
        latencyMs,
      })
      .catch((error: unknown) => deps.log.warn({ err: error }, 'could not record the summarizer call'));
  if (input.deferredRecords) input.deferredRecords.push(record);
  else await record();
  assertUsableSummary(result.text);
  return result.text.trim();
}

/** Summarizer messages as pack messages (the counter measures them on demand). */
export function asPackMessages(messages: readonly { role: 'system' | 'user'; content: string }[]): PackMessage[] {
  return messages.map((message) => ({ role: message.role, content: message.content, tokens: 0 }));
}

/**
 * The rewriting strategy (each fold rewrites the whole summary), kept as the baseline the segment fidelity test
 * measures appendSegments against.
 * Progressive: each chunk of `folded` is summarized on top of the summary so far (starting from `previous`);
 * no folded entry is dropped. `fromSeq` is the first seq the new text covers.
 */
export async function summarizeChunks(
  input: CallInput & {
    previous: { text: string } | null;
    folded: ContextEntry[];
    fromSeq: number;
    template: typeof DEFAULT_SUMMARY_PROMPT;
  },
  deps: SummarizeDeps,
): Promise<string> {
  const { settings } = deps;
  // What the prompt costs around the entries (the previous summary is accounted for by the chunking itself).
  const overheadTokens = settings.counter.countPack(
    asPackMessages(
      renderSummaryPrompt({
        previousSummary: null,
        entries: [],
        maxTokens: settings.summaryMaxTokens,
        fromSeq: input.fromSeq,
        throughSeq: input.fromSeq,
        template: input.template,
      }),
    ),
  );
  const chunks = buildSummarizerInputs({
    summary: input.previous
      ? {
          ...input.previous,
          tokens: settings.counter.countText(input.previous.text),
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
  let summary = input.previous?.text ?? null;
  for (const chunk of chunks) {
    const messages = renderSummaryPrompt({
      previousSummary: summary,
      entries: chunk.entries,
      maxTokens: settings.summaryMaxTokens,
      fromSeq: input.fromSeq,
      throughSeq: chunk.throughSeq,
      template: input.template,
    });
    summary = await callSummarizer({ ...input, messages: asPackMessages(messages), purpose: 'summary' }, deps);
  }
  return summary ?? '';
}

/** Checked commit: identifiers of the folded entries must appear in the summary; ask once more listing the missing ones. */
export async function ensureRetention(
  input: CallInput & { text: string; folded: ContextEntry[] },
  deps: SummarizeDeps,
): Promise<{ text: string; kept: number; total: number }> {
  const first = checkRetention({ folded: input.folded, summary: input.text });
  if (first.missingVerbatim.length === 0) return { text: input.text, kept: first.kept, total: first.total };
  const messages = retentionRetryMessages({
    summary: input.text,
    missing: first.missingVerbatim,
    maxTokens: deps.settings.summaryMaxTokens,
  });
  const revised = await callSummarizer({ ...input, messages: asPackMessages(messages), purpose: 'summary' }, deps);
  const second = checkRetention({ folded: input.folded, summary: revised });
  return second.kept >= first.kept
    ? { text: revised, kept: second.kept, total: second.total }
    : { text: input.text, kept: first.kept, total: first.total };
}

/** A summary over SUMMARY_MAX_TOKENS is condensed again; as a last resort it is cut at the cap. */
export async function ensureCap(input: CallInput & { text: string }, deps: SummarizeDeps): Promise<string> {
  const { counter, summaryMaxTokens } = deps.settings;
  if (counter.countText(input.text) <= summaryMaxTokens) return input.text;
  const condensed = await callSummarizer(
    {
      ...input,
      messages: asPackMessages(condenseSummaryMessages({ summary: input.text, maxTokens: summaryMaxTokens })),
      purpose: 'summary',
    },
    deps,
  );
  if (counter.countText(condensed) <= summaryMaxTokens) return condensed;
  let cut = condensed;
  while (cut.length > 0 && counter.countText(cut) > summaryMaxTokens - 8)
    cut = cut.slice(0, Math.floor(cut.length * 0.9));
  return `${cut.trimEnd()} […]`;
}
