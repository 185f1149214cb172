import { buildContextPack, shortenToolArguments, type ContextPack, type ToolCall } from '../context';
import { contextStateOf, packBudget, recallTokensFor, type ContextSettings } from '../thread-context/context-settings';
import type { ThreadContext, TranscriptMessage, Turn } from '../domain/types';
import { toMessageDto } from '../dto/api-dto';
import { isModelCallError } from '../errors/model-call-error';
import type {
  ChatCallRecord,
  ChatModelPort,
  ChatResult,
  LogPort,
  ModelCallStore,
  PromptDivergence,
  PromptFingerprints,
  ThreadEventBus,
  TurnStore,
} from '../ports';
import { systemPrefixFor } from '../context/client-instructions';
import { AssistantStream } from './assistant-stream';
import type { PromptPrefixTracker } from './prompt-prefix-tracker';
import { chatCallRecord, recordChatCall } from './record-chat-call';
import type { OpenAIFunctionTool } from '../context/types';
import type { SpendGate } from '../spend-gate/spend-gate';

export interface StreamAnswerDeps {
  turns: TurnStore;
  calls: ModelCallStore;
  events: ThreadEventBus;
  chat: ChatModelPort;
  settings: ContextSettings;
  log: LogPort;
  foldNow: (threadId: string) => Promise<void>;
  maxRetries: number;
  retryBaseMs: number;
  streamSaveMs: number;
  /** Where each call's prompt first differs from the thread's previous call's (recorded with the call). */
  prompts?: PromptPrefixTracker;
  /**
   * Spend limits: each call reserves its worst case before it is made (SPEND_LIMIT_REACHED ends the turn when it does
   * not fit) and settles to its recorded usage after. Absent (SPEND_LIMITS=off): no statement is spent on them.
   */
  spend?: SpendGate;
}

/** The state of a running turn the runner shares with this step (cancel, partial text). */
export interface ActiveTurn {
  turnId: string;
  controller: AbortController;
  stream: AssistantStream | null;
  /**
   * The record of a call that failed or was stopped after its answer began streaming: the runner stores it with the
   * partial answer, so the call is counted (costs, spend limits) with the answer as far as it went.
   */
  unfinishedCall?: ChatCallRecord | null;
}

export interface StreamedAnswer {
  message: TranscriptMessage;
  /** Every call the model made, those with unparseable arguments included (see `invalid`). */
  toolCalls: ToolCall[];
  /** Call id -> why its arguments could not be read. */
  invalid: Map<string, string>;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/** The per-call note of a follow-up whose results landed before replies that were composed without them. */
export function lateResultsNote(seqs: readonly number[]): string {
  const list = seqs.map((seq) => `#${seq}`).join(', ');
  return `Tool results arrived in the conversation above (message ${list}) after the replies that follow them were written: answer with them now.`;
}

/**
 * The pack of one chat call: long tool arguments shortened, and the budget reduced by the tool schemas offered with
 * it (they count as prompt tokens too). A follow-up's results stay where they are in the window (moving them would
 * re-render the window and break the provider's prompt cache); when replies follow one of them, a per-call note at
 * the end points the model at them.
 */
export function buildTurnPack(
  context: ThreadContext,
  settings: ContextSettings,
  tools: readonly OpenAIFunctionTool[],
  lastSeqs: readonly number[] = [],
  options: { recall?: boolean } = {},
): { pack: ContextPack; toolSchemaTokens: number } {
  const toolSchemaTokens = tools.length > 0 ? settings.counter.countToolSchemas(tools) : 0;
  const state = shortenToolArguments(contextStateOf(context, settings), settings.counter);
  const results = new Set(lastSeqs);
  const lastOther = state.window.reduce((max, entry) => (results.has(entry.seq) ? max : Math.max(max, entry.seq)), -1);
  const late = state.window
    .filter((entry) => results.has(entry.seq) && entry.seq < lastOther)
    .map((entry) => entry.seq);
  const pack = buildContextPack({
    systemPrefix: systemPrefixFor(context.thread, settings.systemPrefix),
    state,
    budget: packBudget(settings) - toolSchemaTokens,
    counter: settings.counter,
    compat: settings.compat,
    recallTokens: options.recall === false ? 0 : recallTokensFor(context, settings),
    recallGate: settings.recallGate ?? false,
    recallSticky: settings.recallSticky === true,
    ...(settings.recallHeldTokens !== undefined ? { recallHeldTokens: settings.recallHeldTokens } : {}),
    ...(context.savedMemories
      ? { savedMemories: { items: context.savedMemories, tokens: settings.userMemoryTokens } }
      : {}),
    ...(late.length > 0 ? { notes: [lateResultsNote(late)] } : {}),
  });
  return { pack, toolSchemaTokens };
}

/**
 * The tool-schema tokens this process's chat calls sent (each call's offered list, by our count): the per-turn
 * work-budget test holds them per turn, so a tool added to every prompt fails CI instead of costing every call.
 */
export const promptWork = { toolSchemaTokens: 0 };

/** What streamAnswer is asked for: the turn, the thread as it was read, and the call's tools. */
export interface StreamAnswerInput {
  turn: Turn;
  context: ThreadContext;
  active: ActiveTurn;
  tools: OpenAIFunctionTool[];
  toolChoice?: 'none';
  lastSeqs?: number[];
}

/**
 * One model answer, streamed into a new assistant message and completed with its tool calls; its entry joins
 * the window. Retryable provider errors before the first token are retried with backoff; a context overflow
 * folds the thread synchronously once and retries.
 */
export async function streamAnswer(input: StreamAnswerInput, deps: StreamAnswerDeps): Promise<StreamedAnswer> {
  const { turn, active } = input;
  const stream = new AssistantStream({
    turn,
    turns: deps.turns,
    events: deps.events,
    log: deps.log,
    saveMs: deps.streamSaveMs,
  });
  active.stream = stream;
  const retry: RetryState = { context: input.context, overflowRetried: false };
  for (let attempt = 0; ; attempt += 1) {
    const call = await prepareAttempt(input, retry, deps);
    try {
      return await completeAnswer({ input, stream, call }, deps);
    } catch (error) {
      const reason: unknown = active.controller.signal.aborted ? active.controller.signal.reason : error;
      await recordFailedAttempt({ input, stream, call, reason }, deps);
      await retryOrThrow({ input, stream, retry, attempt, reason }, deps);
    }
  }
}

/** What carries over from one attempt of streamAnswer to the next. */
interface RetryState {
  /** The thread as the next attempt packs it: reloaded after an overflow's fold. */
  context: ThreadContext;
  /** A provider's overflow was retried once already (with a fold, and without the recall slot). */
  overflowRetried: boolean;
}

/** One attempt's call: its pack and the figures its record keeps. */
interface AnswerAttempt {
  context: ThreadContext;
  pack: ContextPack;
  toolSchemaTokens: number;
  promptDivergence: PromptDivergence | null;
  promptFingerprints: PromptFingerprints | null;
  ownerId: string;
  overflowRetry: boolean;
  startedAt: number;
}

/**
 * Packs the attempt's call, observes where its prompt diverges from the thread's previous call's, and reserves its
 * worst case against the owner's spend limit (a call that cannot fit ends the turn: this is outside the retries).
 */
async function prepareAttempt(
  input: StreamAnswerInput,
  retry: RetryState,
  deps: StreamAnswerDeps,
): Promise<AnswerAttempt> {
  const { context, overflowRetried } = retry;
  // After a provider's overflow, the retry goes without the recall slot: the first thing a pack gives up.
  const { pack, toolSchemaTokens } = buildTurnPack(context, deps.settings, input.tools, input.lastSeqs, {
    recall: !overflowRetried,
  });
  const observed = deps.prompts?.observe({
    threadId: input.turn.threadId,
    messages: pack.messages,
    tools: input.tools,
    toolSchemaTokens,
    stored: context.lastPrompt ?? null,
  });
  const ownerId = context.thread.ownerId;
  // Before the call, outside the retry handling: a call that cannot fit the owner's limit ends the turn.
  if (deps.spend)
    await deps.spend.reserveCall({
      turnId: input.turn.id,
      userId: ownerId,
      model: deps.chat.model,
      promptTokens: pack.tokens + toolSchemaTokens,
    });
  return {
    context,
    pack,
    toolSchemaTokens,
    promptDivergence: observed?.divergence ?? null,
    promptFingerprints: observed?.fingerprints ?? null,
    ownerId,
    overflowRetry: overflowRetried,
    startedAt: Date.now(),
  };
}

/** The model's tool calls, those with unparseable arguments included, and why each of those could not be read. */
function toolCallsOf(result: ChatResult): { toolCalls: ToolCall[]; invalid: Map<string, string> } {
  const invalid = new Map((result.invalidToolCalls ?? []).map((call) => [call.id, call.error]));
  const toolCalls = [
    ...result.toolCalls,
    ...(result.invalidToolCalls ?? []).map((call) => ({
      id: call.id,
      name: call.name,
      args: { invalid_arguments: call.rawArguments },
    })),
  ];
  return { toolCalls, invalid };
}

/**
 * Streams the call into the assistant message and completes it: the answer and its call's record commit together,
 * the call's spending is settled, the message's end announced.
 */
async function completeAnswer(
  given: { input: StreamAnswerInput; stream: AssistantStream; call: AnswerAttempt },
  deps: StreamAnswerDeps,
): Promise<StreamedAnswer> {
  const { input, stream, call: attempt } = given;
  const { settings, chat } = deps;
  const { context, pack, toolSchemaTokens } = attempt;
  const threadId = input.turn.threadId;
  promptWork.toolSchemaTokens += toolSchemaTokens;
  const result = await chat.stream({
    messages: pack.messages,
    signal: input.active.controller.signal,
    onDelta: (delta) => stream.onDelta(delta),
    cacheKey: threadId,
    ...(input.tools.length > 0 ? { tools: input.tools } : {}),
    ...(input.toolChoice ? { toolChoice: input.toolChoice } : {}),
  });
  // The provider's count of this very prompt teaches the model's estimate correction.
  // Per user: one user's text cannot move everyone's factor (the median over users is what counts).
  if (result.usage)
    settings.correction?.observe(pack.tokens + toolSchemaTokens, result.usage.promptTokens, context.thread.ownerId);
  const { toolCalls, invalid } = toolCallsOf(result);
  const messageId = await stream.ensureMessage();
  const entryTokens = settings.counter.countMessage({ role: 'assistant', content: stream.text, toolCalls });
  // The answer and what the model was given for it commit together: a stored answer always has its manifest.
  const call = chatCallRecord({
    threadId,
    messageId,
    model: chat.model,
    pack,
    toolSchemaTokens,
    startedAt: attempt.startedAt,
    usage: result.usage,
    overflowRetry: attempt.overflowRetry,
    systemPrefix: systemPrefixFor(context.thread, settings.systemPrefix),
    promptDivergence: attempt.promptDivergence,
    promptFingerprints: attempt.promptFingerprints,
  });
  const finished = await deps.turns.finishMessage({
    messageId,
    content: stream.text,
    status: 'complete',
    tokens: entryTokens,
    encoding: settings.counter.encoding,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    entry: {
      role: 'assistant',
      content: stream.text,
      tokens: entryTokens,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    },
    call,
  });
  stream.completed = true;
  // Counted from the figures its model_calls row holds (the answer's tokens where no usage was reported).
  await deps.spend?.settleCall({
    turnId: input.turn.id,
    userId: attempt.ownerId,
    call: { ...call, answerTokens: entryTokens },
  });
  deps.events.publish({ type: 'message-end', threadId, message: toMessageDto(finished) });
  return { message: finished, toolCalls, invalid };
}

/**
 * A failed attempt's call as far as it went (no usage was reported for it). Its answer began: the runner stores the
 * partial answer with this record, and `reason` is thrown. A later step of a completed answer failed: its call is
 * stored with it already, and `reason` is thrown. Otherwise the call is recorded and its prompt counted alone.
 */
async function recordFailedAttempt(
  given: { input: StreamAnswerInput; stream: AssistantStream; call: AnswerAttempt; reason: unknown },
  deps: StreamAnswerDeps,
): Promise<void> {
  const { input, stream, call, reason } = given;
  const { settings, chat } = deps;
  const threadId = input.turn.threadId;
  // The call as far as it went: no usage was reported for it.
  const unreported = {
    threadId,
    model: chat.model,
    pack: call.pack,
    toolSchemaTokens: call.toolSchemaTokens,
    startedAt: call.startedAt,
    usage: null,
    overflowRetry: call.overflowRetry,
    promptDivergence: call.promptDivergence,
    promptFingerprints: call.promptFingerprints,
  };
  if (stream.messageId !== null && !stream.completed) {
    // Its answer began: the runner stores the partial answer with this record (and counts its spending).
    input.active.unfinishedCall = chatCallRecord({
      ...unreported,
      messageId: stream.messageId,
      systemPrefix: systemPrefixFor(call.context.thread, settings.systemPrefix),
    });
    throw reason;
  }
  // A later step of a completed answer failed: its call is stored with it already.
  if (stream.completed) throw reason;
  await recordChatCall({ ...unreported, messageId: null, error: reason }, deps);
  // A failed call's row counts its prompt alone (our estimate), and so does the spending.
  await deps.spend?.settleCall({
    turnId: input.turn.id,
    userId: call.ownerId,
    call: {
      model: chat.model,
      estimatedPromptTokens: call.pack.tokens + call.toolSchemaTokens,
      reportedPromptTokens: null,
      reportedCompletionTokens: null,
    },
  });
}

/**
 * Returns when the failed attempt is to be tried again: a provider's context overflow once (after folding the thread
 * now and reloading it), a retryable error before the first token after a backoff. Throws `reason` otherwise.
 */
async function retryOrThrow(
  given: { input: StreamAnswerInput; stream: AssistantStream; retry: RetryState; attempt: number; reason: unknown },
  deps: StreamAnswerDeps,
): Promise<void> {
  const { input, stream, retry, attempt, reason } = given;
  const { controller } = input.active;
  const threadId = input.turn.threadId;
  // Stopped, or cut after text reached the user (its message still being made): never retried.
  if (controller.signal.aborted || stream.text !== '') throw reason;
  if (isModelCallError(reason) && reason.kind === 'context_overflow' && !retry.overflowRetried) {
    retry.overflowRetried = true;
    deps.log.warn(
      { threadId, turnId: input.turn.id },
      'provider reported context overflow: folding now and retrying once',
    );
    await deps.foldNow(threadId);
    retry.context = (await deps.turns.loadContext(threadId, { recall: true })) ?? retry.context;
    return;
  }
  if (isModelCallError(reason) && reason.retryable && attempt < deps.maxRetries) {
    const wait = reason.retryAfterMs ?? deps.retryBaseMs * 2 ** attempt;
    await sleep(Math.min(wait, 30_000), controller.signal);
    if (controller.signal.aborted) throw controller.signal.reason;
    return;
  }
  throw reason;
}
