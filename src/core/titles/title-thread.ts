import type { ContextSettings } from '../thread-context/context-settings';
import { toThreadDto } from '../dto/api-dto';
import { forkTitle } from '../fork/fork-thread';
import type {
  ChatResult,
  FirstExchange,
  LogPort,
  ModelCallStore,
  SummarizerPort,
  ThreadEventBus,
  ThreadTitleStore,
} from '../ports';
import { cleanModelTitle } from './clean-model-title';
import { titleFromWords } from './title-from-words';
import { titlePromptMessages } from './title-prompt';

/** What titling a thread needs; `model` is null with the offline model (titles from the first message's words). */
export interface TitleDeps {
  titles: ThreadTitleStore;
  model: SummarizerPort | null;
  calls: ModelCallStore;
  events: ThreadEventBus;
  settings: Pick<ContextSettings, 'counter'>;
  log: LogPort;
}

export type TitleOutcome =
  | { status: 'titled'; title: string; by: 'model' | 'words' }
  /** Titled already (by a rename, a branch's parent or an earlier job), gone, or with nothing to make a title of. */
  | { status: 'skipped'; reason: string };

/**
 * Titles a thread after its first exchange, unless a title was set meanwhile: by the summarizer model when there is
 * one (a short call recorded in model_calls with purpose `title`), else, for an OpenAI client's thread (its client
 * titles it itself) or when the model's answer holds no title, from the first message's words. The write is
 * conditional, so a user's rename is never overwritten, and running it twice is harmless. A model error throws (the
 * job retries) unless `lastAttempt`, where the words' title is used instead. Announces the title with `thread-updated`.
 */
export async function titleThread(
  input: { threadId: string; lastAttempt?: boolean; signal?: AbortSignal },
  deps: TitleDeps,
): Promise<TitleOutcome> {
  const exchange = await deps.titles.firstExchange(input.threadId);
  if (!exchange) return { status: 'skipped', reason: 'titled already, or gone' };
  const words = titleFromWords(exchange.userText);
  const model = exchange.openaiClient ? null : deps.model;
  const made = model ? await modelTitle(input, exchange, { ...deps, model }) : null;
  const title = made || words;
  if (!title) return { status: 'skipped', reason: 'the first message has no words to make a title of' };
  const full = exchange.branch ? forkTitle(title) : title;
  const updated = await deps.titles.setAutomaticTitle(input.threadId, full);
  if (!updated) return { status: 'skipped', reason: 'titled meanwhile' };
  deps.events.publish({ type: 'thread-updated', threadId: updated.id, thread: toThreadDto(updated) });
  return { status: 'titled', title: full, by: made ? 'model' : 'words' };
}

/** The model's title, or '' when its answer holds none (or it failed on the last attempt). */
async function modelTitle(
  input: { threadId: string; lastAttempt?: boolean; signal?: AbortSignal },
  exchange: FirstExchange,
  deps: TitleDeps & { model: SummarizerPort },
): Promise<string> {
  const messages = titlePromptMessages(exchange);
  const started = Date.now();
  try {
    const result = await deps.model.summarize({ messages, ...(input.signal ? { signal: input.signal } : {}) });
    await record(
      { threadId: input.threadId, messages, usage: result.usage, latencyMs: Date.now() - started, error: null },
      deps,
    );
    return cleanModelTitle(result.text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await record(
      { threadId: input.threadId, messages, usage: null, latencyMs: Date.now() - started, error: message },
      deps,
    );
    if (!input.lastAttempt) throw error;
    deps.log.warn({ err: error, threadId: input.threadId }, 'the title model failed: titled from the first message');
    return '';
  }
}

/** The title call's model_calls row (its cost shows in the admin's costs); a failed insert is only logged. */
async function record(
  call: {
    threadId: string;
    messages: ReturnType<typeof titlePromptMessages>;
    usage: ChatResult['usage'];
    latencyMs: number;
    error: string | null;
  },
  deps: TitleDeps & { model: SummarizerPort },
): Promise<void> {
  await deps.calls
    .record({
      threadId: call.threadId,
      messageId: null,
      purpose: 'title',
      model: deps.model.model,
      estimatedPromptTokens: deps.settings.counter.countPack(call.messages),
      reportedPromptTokens: call.usage?.promptTokens ?? null,
      reportedCompletionTokens: call.usage?.completionTokens ?? null,
      reportedCachedTokens: call.usage?.cachedTokens ?? null,
      reportedCacheWriteTokens: call.usage?.cacheWriteTokens ?? null,
      latencyMs: call.latencyMs,
      error: call.error,
    })
    .catch((error: unknown) => deps.log.warn({ err: error }, 'could not record the title call'));
}
