import { packBudget, type ContextSettings } from '../context-settings';
import type { PackMessage } from '../context/types';
import { AppError, isAppError } from '../errors';
import type { RateLimiter } from '../limits/rate-limiter';
import { isModelCallError } from '../model-call-error';
import type { ChatModelPort } from '../ports';
import { spendOrRefuse } from '../turn/spend-or-refuse';
import type { ClientMessage } from './client-view';

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
  /** The token counter and the prompt budget a request must fit. */
  settings: Pick<ContextSettings, 'counter' | 'budget' | 'correction'>;
  /** TURN_TIMEOUT_MS. */
  timeoutMs: number;
}

export interface AuxiliaryAnswer {
  text: string;
  usage: { promptTokens: number; completionTokens: number; cachedTokens: number | null };
}

/**
 * Answers an auxiliary request statelessly: the client's messages go to the model as sent (its system messages first,
 * then its user message), nothing is stored, no thread is created or forked. Spends the user's send limit; a prompt
 * over the pack budget is refused before the model is called.
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
  const { counter } = deps.settings;
  const messages: PackMessage[] = [];
  if (input.instructions !== null)
    messages.push({
      role: 'system',
      content: input.instructions,
      tokens: counter.countMessage({ role: 'system', content: input.instructions }),
    });
  messages.push({
    role: 'user',
    content: input.content,
    tokens: counter.countMessage({ role: 'user', content: input.content }),
  });
  const tokens = counter.countPack(messages);
  const budget = packBudget(deps.settings);
  if (tokens > budget)
    throw new AppError(
      'TOO_LARGE',
      `This request has about ${tokens} prompt tokens; the model takes at most ${budget}.`,
      { details: { field: 'messages' } },
    );
  await spendOrRefuse(deps.sendLimiter, input.userId);
  const timeout = AbortSignal.timeout(deps.timeoutMs);
  try {
    const result = await deps.chat.stream({
      messages,
      signal: AbortSignal.any([input.signal, timeout]),
      onDelta: input.onDelta,
    });
    const usage = result.usage;
    return {
      text: result.text,
      usage: {
        promptTokens: usage?.promptTokens ?? 0,
        completionTokens: usage?.completionTokens ?? 0,
        cachedTokens: usage?.cachedTokens ?? null,
      },
    };
  } catch (error) {
    throw modelFailure(error, timeout.aborted);
  }
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
