import { packBudget, type ContextSettings } from '../thread-context/context-settings';
import type { PackMessage } from '../context/types';
import { AppError, isAppError } from '../errors/app-error';
import type { RateLimiter } from '../limits/rate-limiter';
import { isModelCallError } from '../errors/model-call-error';
import type { ChatModelPort, ChatResult, ClientMessage, LogPort, ModelCallStore } from '../ports';
import { spendOrRefuse } from '../turn/spend-or-refuse';
import { CLIENT_INSTRUCTIONS_HEADING } from '../context/client-instructions';
import type { SpendGate } from '../spend-gate/spend-gate';

/**
 * A client's background request about a conversation rather than a turn of it (a title, tags, suggestions): one user
 * message whose text begins with one of `prefixes` (FACADE_AUXILIARY_PREFIXES; leading white space aside), system
 * messages aside. Open WebUI sends its task prompts (they all begin `### Task:`) to the chat's connection with the
 * chat's id, as one user message holding the task and an excerpt of the chat: taken for a turn, each would fork it.
 */
export function isAuxiliaryRequest(messages: readonly ClientMessage[], prefixes: readonly string[]): boolean {
  const [only] = messages;
  if (messages.length !== 1 || only?.role !== 'user') return false;
  const text = only.content.trimStart();
  return prefixes.some((prefix) => prefix !== '' && text.startsWith(prefix));
}

export interface AuxiliaryDeps {
  chat: ChatModelPort;
  /** RATE_LIMIT_PER_MINUTE: such a request spends the send limit like a turn. */
  sendLimiter: RateLimiter;
  /** The operator's system prompt (SYSTEM_PROMPT), the token counter and the prompt budget a request must fit. */
  settings: Pick<ContextSettings, 'counter' | 'budget' | 'correction' | 'systemPrefix'>;
  /** MAX_MESSAGE_CHARS: the longest user message, as for a turn. */
  maxMessageChars: number;
  /** TURN_TIMEOUT_MS. */
  timeoutMs: number;
  /** Where each model call is recorded (purpose `auxiliary`, for the user): the admin's costs count it. */
  calls: ModelCallStore;
  log: LogPort;
  /** Spend limits: a request holds a send's worst case while it runs (refused SPEND_LIMIT_REACHED when it cannot). */
  spend?: SpendGate;
}

export interface AuxiliaryAnswer {
  text: string;
  usage: { promptTokens: number; completionTokens: number; cachedTokens: number | null };
}

/**
 * Answers an auxiliary request statelessly: the model gets the operator's system prompt (SYSTEM_PROMPT) with the
 * client's instructions after it, as a thread's system prefix holds them, then the client's user message; nothing of
 * the conversation is stored, no thread is created or forked. The send limit is spent and the message's length
 * checked (MAX_MESSAGE_CHARS) before anything is counted; a prompt over the pack budget is refused before the model
 * is called; the model call is recorded for the user (model_calls, purpose `auxiliary`), answered or failed.
 */
export async function answerAuxiliary(
  input: {
    userId: string;
    instructions: string | null;
    content: string;
    signal: AbortSignal;
    onDelta: (text: string) => void;
  },
  deps: AuxiliaryDeps,
): Promise<AuxiliaryAnswer> {
  await spendOrRefuse(deps.sendLimiter, input.userId);
  if (input.content.length > deps.maxMessageChars)
    throw new AppError(
      'TOO_LARGE',
      `The message has ${input.content.length} characters; the limit is ${deps.maxMessageChars}.`,
      { details: { field: 'messages' } },
    );
  const { messages, tokens } = auxiliaryPrompt(input, deps.settings);
  const budget = packBudget(deps.settings);
  if (tokens > budget)
    throw new AppError(
      'TOO_LARGE',
      `This request has about ${tokens} prompt tokens; the model takes at most ${budget}.`,
      { details: { field: 'messages' } },
    );
  // Held like a send (a client cannot spend past its limit by dressing its messages as background requests); what the
  // call spends is counted with its record (model_calls), then the hold goes.
  const holdId = deps.spend ? await deps.spend.hold({ userId: input.userId }) : null;
  const timeout = AbortSignal.timeout(deps.timeoutMs);
  const startedAt = Date.now();
  let usage: ChatResult['usage'] = null;
  let failure: unknown = null;
  try {
    const result = await deps.chat.stream({
      messages,
      signal: AbortSignal.any([input.signal, timeout]),
      onDelta: input.onDelta,
    });
    usage = result.usage;
    return {
      text: result.text,
      usage: {
        promptTokens: usage?.promptTokens ?? 0,
        completionTokens: usage?.completionTokens ?? 0,
        cachedTokens: usage?.cachedTokens ?? null,
      },
    };
  } catch (error) {
    failure = error;
    throw modelFailure(error, timeout.aborted);
  } finally {
    await recordAuxiliaryCall({ userId: input.userId, tokens, usage, failure, startedAt }, deps);
    if (holdId) await deps.spend?.releaseHold(holdId);
  }
}

/** The system message (the operator's prompt, then the client's instructions) and the user message, counted. */
function auxiliaryPrompt(
  input: { instructions: string | null; content: string },
  settings: Pick<ContextSettings, 'counter' | 'systemPrefix'>,
): { messages: PackMessage[]; tokens: number } {
  const { counter } = settings;
  const system = input.instructions
    ? `${settings.systemPrefix}${CLIENT_INSTRUCTIONS_HEADING}${input.instructions}`
    : settings.systemPrefix;
  const messages: PackMessage[] = [];
  if (system !== '')
    messages.push({
      role: 'system',
      content: system,
      tokens: counter.countMessage({ role: 'system', content: system }),
    });
  messages.push({
    role: 'user',
    content: input.content,
    tokens: counter.countMessage({ role: 'user', content: input.content }),
  });
  return { messages, tokens: counter.countPack(messages) };
}

/** Records the call for the user; a failing record is logged, never fails the answer. */
async function recordAuxiliaryCall(
  call: { userId: string; tokens: number; usage: ChatResult['usage']; failure: unknown; startedAt: number },
  deps: Pick<AuxiliaryDeps, 'calls' | 'chat' | 'log'>,
): Promise<void> {
  try {
    await deps.calls.record({
      threadId: null,
      userId: call.userId,
      messageId: null,
      purpose: 'auxiliary',
      model: deps.chat.model,
      estimatedPromptTokens: call.tokens,
      reportedPromptTokens: call.usage?.promptTokens ?? null,
      reportedCompletionTokens: call.usage?.completionTokens ?? null,
      reportedCachedTokens: call.usage?.cachedTokens ?? null,
      reportedCacheWriteTokens: call.usage?.cacheWriteTokens ?? null,
      latencyMs: Date.now() - call.startedAt,
      error: call.failure === null ? null : failureKind(call.failure),
    });
  } catch (error) {
    deps.log.warn({ err: error }, 'could not record the auxiliary model call');
  }
}

/** What a failed call's record says: the kind of failure, never a provider's text (it may quote the request). */
function failureKind(error: unknown): string {
  return isModelCallError(error) ? error.kind : isAppError(error) ? error.code : 'failed';
}

function modelFailure(error: unknown, timedOut: boolean): unknown {
  if (isAppError(error)) return error;
  if (timedOut || (isModelCallError(error) && error.kind === 'timeout'))
    return new AppError('PROVIDER_TIMEOUT', 'The model did not answer in time; try again.', { cause: error });
  if (isModelCallError(error) && error.kind === 'context_overflow')
    return new AppError('CONTEXT_OVERFLOW', 'The request is too long for the model.', { cause: error });
  if (isModelCallError(error))
    return new AppError('PROVIDER_ERROR', 'The model provider failed to answer; try again.', { cause: error });
  return error;
}
