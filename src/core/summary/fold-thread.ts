import { buildSummarizerInputs } from '../context';
import { checkRetention } from '../context';
import { filterCitations } from '../context';
import { planFold } from '../context';
import { shouldFold } from '../context';
import { DEFAULT_SUMMARY_PROMPT, renderSummaryPrompt } from '../context';
import type { ContextEntry, PackMessage } from '../context';
import { contextStateOf, policiesFor, type ContextSettings } from '../context-settings';
import type { LogPort, ModelCallStore, SummarizerPort, SummaryStore, ThreadEventBus, TurnStore } from '../ports';
import { condenseSummaryMessages, retentionRetryMessages } from './revision-prompts';
import { assertUsableSummary } from './usable-summary';

export interface FoldDeps {
  turns: Pick<TurnStore, 'loadContext'>;
  summaries: SummaryStore;
  summarizer: SummarizerPort;
  calls: ModelCallStore;
  events: ThreadEventBus;
  settings: ContextSettings;
  log: LogPort;
}

export type FoldOutcome =
  | { status: 'folded'; revision: number; foldedEntries: number; throughSeq: number }
  | { status: 'skipped'; reason: string };

/** Attempts at the compare-and-set commit before giving up (another fold keeps winning). */
const MAX_COMMIT_ATTEMPTS = 3;

/**
 * Folds the entries that fell out of the window into the summary: plans the cut with the core, summarizes
 * progressively (previous summary + folded entries, in chunks), checks that identifiers survived, caps the
 * summary, and commits with compare-and-set on the thread's version. Safe to run twice or concurrently:
 * a commit that lost the race re-plans from the new state, so no entry is folded twice or lost.
 */
export async function foldThread(input: { threadId: string; author?: 'fold' | 'overflow-fallback'; force?: boolean; signal?: AbortSignal }, deps: FoldDeps): Promise<FoldOutcome> {
  const { settings } = deps;
  for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt += 1) {
    const context = await deps.turns.loadContext(input.threadId);
    if (!context) return { status: 'skipped', reason: 'thread not found' };
    const state = contextStateOf(context);
    if (state.memoryMode === 'window-only') return { status: 'skipped', reason: 'window-only thread' };
    const { trigger, keep } = policiesFor(context, settings);
    if (!input.force && !shouldFold(state, trigger, settings.profile).fold) return { status: 'skipped', reason: 'trigger not reached' };
    const plan = planFold({ window: state.window, keep, profile: settings.profile });
    const folded = plan.folded;
    const last = folded.at(-1);
    if (!last) return { status: 'skipped', reason: 'the window already fits the keep policy' };

    const started = Date.now();
    const fromSeq = state.summary ? state.summary.coveredThroughSeq + 1 : state.contextStartSeq;
    const template = context.thread.settings.summaryPrompt
      ? { ...DEFAULT_SUMMARY_PROMPT, system: context.thread.settings.summaryPrompt }
      : DEFAULT_SUMMARY_PROMPT;
    const usage = { tokensIn: 0, tokensOut: 0 };
    let text = await summarizeChunks({ threadId: input.threadId, previous: state.summary, folded, fromSeq, template, usage, signal: input.signal }, deps);
    const retention = await ensureRetention({ threadId: input.threadId, text, folded, usage, signal: input.signal }, deps);
    text = await ensureCap({ threadId: input.threadId, text: retention.text, usage, signal: input.signal }, deps);
    text = filterCitations({ summary: text, fromSeq: state.contextStartSeq, throughSeq: last.seq });
    assertUsableSummary(text);

    const result = await deps.summaries.commit({
      threadId: input.threadId,
      expectedVersion: context.thread.version,
      author: input.author ?? 'fold',
      text,
      tokens: settings.counter.countText(text),
      encoding: settings.counter.encoding,
      fromSeq,
      throughSeq: last.seq,
      foldedSeqs: folded.map((entry) => entry.seq),
      model: deps.summarizer.model,
      tokensIn: usage.tokensIn,
      tokensOut: usage.tokensOut,
      durationMs: Date.now() - started,
      identifiersKept: retention.kept,
      identifiersTotal: retention.total,
    });
    if (!result.committed) {
      deps.log.info({ threadId: input.threadId, attempt }, 'fold lost a compare-and-set race; re-planning');
      continue;
    }
    const tokens = settings.counter.countText(text);
    deps.events.publish({ type: 'summary-updated', threadId: input.threadId, revision: result.revision, coveredThroughSeq: last.seq, tokens });
    deps.log.info({ threadId: input.threadId, revision: result.revision, folded: folded.length, throughSeq: last.seq, ms: Date.now() - started }, 'fold committed');
    return { status: 'folded', revision: result.revision, foldedEntries: folded.length, throughSeq: last.seq };
  }
  return { status: 'skipped', reason: 'the thread kept changing; a later fold will catch up' };
}

interface CallInput {
  threadId: string;
  usage: { tokensIn: number; tokensOut: number };
  signal?: AbortSignal;
}

/** One summarizer call, recorded with its usage. */
async function callSummarizer(input: CallInput & { messages: PackMessage[]; purpose: 'summary' }, deps: FoldDeps): Promise<string> {
  const started = Date.now();
  const estimated = deps.settings.counter.countPack(input.messages);
  const result = await deps.summarizer.summarize({ messages: input.messages, ...(input.signal ? { signal: input.signal } : {}) });
  input.usage.tokensIn += result.usage?.promptTokens ?? estimated;
  input.usage.tokensOut += result.usage?.completionTokens ?? deps.settings.counter.countText(result.text);
  await deps.calls.record({
    threadId: input.threadId, messageId: null, purpose: input.purpose, model: deps.summarizer.model,
    estimatedPromptTokens: estimated, reportedPromptTokens: result.usage?.promptTokens ?? null,
    reportedCompletionTokens: result.usage?.completionTokens ?? null, latencyMs: Date.now() - started,
  }).catch((error: unknown) => deps.log.warn({ err: error }, 'could not record the summarizer call'));
  assertUsableSummary(result.text);
  return result.text.trim();
}

function asPackMessages(messages: readonly { role: 'system' | 'user'; content: string }[]): PackMessage[] {
  return messages.map((message) => ({ role: message.role, content: message.content, tokens: 0 }));
}

/** Progressive: each chunk is summarized on top of the summary so far; no folded entry is dropped. */
async function summarizeChunks(input: CallInput & { previous: { text: string } | null; folded: ContextEntry[]; fromSeq: number; template: typeof DEFAULT_SUMMARY_PROMPT }, deps: FoldDeps): Promise<string> {
  const { settings } = deps;
  // What the prompt costs around the entries (the previous summary is accounted for by the chunking itself).
  const overheadTokens = settings.counter.countPack(asPackMessages(renderSummaryPrompt({
    previousSummary: null, entries: [], maxTokens: settings.summaryMaxTokens, fromSeq: input.fromSeq, throughSeq: input.fromSeq, template: input.template,
  })));
  const chunks = buildSummarizerInputs({
    summary: input.previous ? { ...input.previous, tokens: settings.counter.countText(input.previous.text), coveredThroughSeq: input.fromSeq - 1, revision: 0 } : null,
    folded: input.folded,
    budget: settings.summarizerInputMaxTokens,
    summaryMaxTokens: settings.summaryMaxTokens,
    overheadTokens,
    counter: settings.counter,
  });
  let summary = input.previous?.text ?? null;
  for (const chunk of chunks) {
    const messages = renderSummaryPrompt({
      previousSummary: summary, entries: chunk.entries, maxTokens: settings.summaryMaxTokens,
      fromSeq: input.fromSeq, throughSeq: chunk.throughSeq, template: input.template,
    });
    summary = await callSummarizer({ ...input, messages: asPackMessages(messages), purpose: 'summary' }, deps);
  }
  return summary ?? '';
}

/** Checked commit: identifiers of the folded entries must appear in the summary; ask once more listing the missing ones. */
async function ensureRetention(input: CallInput & { text: string; folded: ContextEntry[] }, deps: FoldDeps): Promise<{ text: string; kept: number; total: number }> {
  const first = checkRetention({ folded: input.folded, summary: input.text });
  if (first.missing.length === 0) return { text: input.text, kept: first.kept, total: first.total };
  const messages = retentionRetryMessages({ summary: input.text, missing: first.missing, maxTokens: deps.settings.summaryMaxTokens });
  const revised = await callSummarizer({ ...input, messages: asPackMessages(messages), purpose: 'summary' }, deps);
  const second = checkRetention({ folded: input.folded, summary: revised });
  return second.kept >= first.kept ? { text: revised, kept: second.kept, total: second.total } : { text: input.text, kept: first.kept, total: first.total };
}

/** A summary over SUMMARY_MAX_TOKENS is condensed again; as a last resort it is cut at the cap. */
async function ensureCap(input: CallInput & { text: string }, deps: FoldDeps): Promise<string> {
  const { counter, summaryMaxTokens } = deps.settings;
  if (counter.countText(input.text) <= summaryMaxTokens) return input.text;
  const condensed = await callSummarizer({ ...input, messages: asPackMessages(condenseSummaryMessages({ summary: input.text, maxTokens: summaryMaxTokens })), purpose: 'summary' }, deps);
  if (counter.countText(condensed) <= summaryMaxTokens) return condensed;
  let cut = condensed;
  while (cut.length > 0 && counter.countText(cut) > summaryMaxTokens - 8) cut = cut.slice(0, Math.floor(cut.length * 0.9));
  return `${cut.trimEnd()} […]`;
}
