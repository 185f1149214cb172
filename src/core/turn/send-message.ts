import { MIN_CONDENSED_MESSAGE_TOKENS } from '../context';
import { AppError } from '../errors/app-error';
import type { ContextSettings } from '../thread-context/context-settings';
import type { RateLimiter } from '../limits/rate-limiter';
import type { AcceptedMessage, TurnStore } from '../ports';
import type { SpendGate } from '../spend-gate/spend-gate';
import { spendOrRefuse } from './spend-or-refuse';

export interface SendMessageInput {
  userId: string;
  threadId: string;
  content: unknown;
  clientMessageId?: unknown;
}

export interface SendMessageDeps {
  turns: TurnStore;
  settings: ContextSettings;
  /** Sends per user per minute, shared by REST and sockets. */
  sendLimiter: RateLimiter;
  maxMessageChars: number;
  maxQueuedTurns: number;
  /** Spend limits (SPEND_LIMITS=on): a send holds its worst case before it is stored; absent, nothing is checked. */
  spend?: SpendGate;
}

/** What an entry point (REST, sockets) holds that a send needs: its limits under `limits`, the rest by name. */
export interface SendMessageSource {
  turns: TurnStore;
  settings: ContextSettings;
  sendLimiter: RateLimiter;
  limits: { maxMessageChars: number; maxQueuedTurns: number };
  spend?: SpendGate | undefined;
}

/** The send's dependencies out of an entry point's. */
export function sendMessageDepsOf(source: SendMessageSource): SendMessageDeps {
  return {
    turns: source.turns,
    settings: source.settings,
    sendLimiter: source.sendLimiter,
    maxMessageChars: source.limits.maxMessageChars,
    maxQueuedTurns: source.limits.maxQueuedTurns,
    ...(source.spend ? { spend: source.spend } : {}),
  };
}

const CLIENT_MESSAGE_ID = /^[A-Za-z0-9_.:-]{1,100}$/;

/**
 * The one send use case of REST and sockets: the user within the rate limit (RATE_LIMITED), the message valid, the
 * thread the user's (NOT_FOUND otherwise, checked by the accept itself). Then it stores the message, queueing its
 * turn. Nothing is stored when a check fails.
 * A repeated clientMessageId returns the original message and its turn instead of a second turn.
 * The caller kicks the turn runner.
 */
export async function sendMessage(input: SendMessageInput, deps: SendMessageDeps): Promise<AcceptedMessage> {
  const { holdId, ...prepared } = await prepareUserMessage(input, deps);
  // The ownership check is part of the accept (one round trip): NOT_FOUND for a thread that is not the user's.
  const accepted = await deps.turns
    .acceptUserMessage({ threadId: input.threadId, ownerId: input.userId, ...prepared, maxQueued: deps.maxQueuedTurns })
    .catch(async (error: unknown) => {
      if (holdId) await deps.spend?.releaseHold(holdId);
      throw error;
    });
  // A repeated clientMessageId starts no turn: its hold goes back.
  if (holdId && accepted.duplicate) await deps.spend?.releaseHold(holdId);
  return accepted;
}

/** A user message that passed the send checks, counted, ready to be stored. */
export interface PreparedUserMessage {
  content: string;
  tokens: number;
  encoding: string;
  clientMessageId: string | null;
  /**
   * The spend hold the send took (SPEND_LIMITS=on and a limit applies): its turn's first call claims it; a caller that
   * stores no turn releases it (else it expires).
   */
  holdId?: string;
}

/**
 * The checks of a send before anything is stored (also an edit's, before its fork is written): the user within the
 * rate limit (RATE_LIMITED), the message valid (VALIDATION, TOO_LARGE) and not so large that no pack could carry even
 * its condensed form (TOO_LARGE, naming the budget); then, last, its spend hold (SPEND_LIMIT_REACHED).
 */
export async function prepareUserMessage(
  input: Pick<SendMessageInput, 'userId' | 'content' | 'clientMessageId'>,
  deps: Pick<SendMessageDeps, 'sendLimiter' | 'settings' | 'maxMessageChars' | 'spend'>,
): Promise<PreparedUserMessage> {
  await spendOrRefuse(deps.sendLimiter, input.userId);
  if (typeof input.content !== 'string') throw new AppError('VALIDATION', 'content must be a string.');
  if (input.content.trim().length === 0) throw new AppError('VALIDATION', 'The message is empty.');
  if (input.content.length > deps.maxMessageChars) {
    throw new AppError(
      'TOO_LARGE',
      `The message has ${input.content.length} characters; the limit is ${deps.maxMessageChars}.`,
    );
  }
  if (input.content.includes('\u0000')) throw new AppError('VALIDATION', 'The message contains a NUL character.');
  const clientMessageId = input.clientMessageId ?? null;
  if (clientMessageId !== null && (typeof clientMessageId !== 'string' || !CLIENT_MESSAGE_ID.test(clientMessageId))) {
    throw new AppError('VALIDATION', 'clientMessageId must be 1-100 characters of letters, digits, _ . : -');
  }
  const { counter, budget, systemPrefix } = deps.settings;
  const tokens = counter.countMessage({ role: 'user', content: input.content });
  // A message longer than a pack's room reaches the model condensed (its head and tail, see buildContextPack); it is
  // refused only where the room beside the system prefix could not carry even that, so no pack could ever answer it.
  const room = budget - counter.countMessage({ role: 'system', content: systemPrefix }) - 3;
  if (tokens > room && room < MIN_CONDENSED_MESSAGE_TOKENS) {
    throw new AppError(
      'TOO_LARGE',
      `The message is ${tokens} tokens; this chat's budget of ${budget} tokens leaves ${Math.max(0, room)} beside its system prompt, too few for even a shortened form of it.`,
    );
  }
  const holdId = deps.spend ? await deps.spend.hold({ userId: input.userId }) : null;
  return { content: input.content, tokens, encoding: counter.encoding, clientMessageId, ...(holdId ? { holdId } : {}) };
}
