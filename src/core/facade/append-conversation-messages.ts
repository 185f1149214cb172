import type { ToolCall } from '../context/types';
import { foldDecisionFor, type ContextSettings } from '../thread-context/context-settings';
import type { TranscriptMessage } from '../domain/types';
import { toMessageDto } from '../dto/api-dto';
import { AppError } from '../errors/app-error';
import type { RateLimiter } from '../limits/rate-limiter';
import type {
  AppendedMessage,
  ClientMessage,
  FacadeConversationStore,
  FoldQueue,
  LogPort,
  ThreadEventBus,
  TurnStore,
} from '../ports';
import { spendOrRefuse } from '../turn/spend-or-refuse';

/** Most items one append may carry (OpenAI's bound on POST /v1/conversations/{id}/items). */
export const MAX_APPENDED_ITEMS = 20;

export interface AppendConversationDeps {
  conversations: Pick<FacadeConversationStore, 'appendMessages'>;
  turns: Pick<TurnStore, 'loadContext'>;
  /** The send limit (RATE_LIMIT_PER_MINUTE): one append spends one, as a send does. */
  sendLimiter: RateLimiter;
  settings: ContextSettings;
  /** MAX_MESSAGE_CHARS: the longest message, as for a send. */
  maxMessageChars: number;
  events: ThreadEventBus;
  jobs: FoldQueue;
  log: LogPort;
  /** Titles the thread (as after a turn's first exchange): a conversation made of appended items gets a title too. */
  requestTitle?: (threadId: string) => Promise<unknown>;
}

/** A conversation's first user message is at most its second message (an assistant's may come first). */
const FIRST_USER_SEQ_AT_MOST = 2;

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION', `${field}: ${message}`, { details: { field } });
}

/** The stored form of a client's tool call: its arguments must be a JSON object. */
function toolCallOf(call: { id: string; name: string; arguments: string }, field: string): ToolCall {
  let args: unknown;
  try {
    args = JSON.parse(call.arguments || '{}');
  } catch {
    throw invalid(field, `the arguments of call ${call.id} are not JSON`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw invalid(field, `the arguments of call ${call.id} are not a JSON object`);
  return { id: call.id, name: call.name, args: args as Record<string, unknown> };
}

/** A client message as the transcript stores it, counted; refused when too long, empty or holding a NUL. */
function appendedOf(
  message: ClientMessage,
  index: number,
  deps: Pick<AppendConversationDeps, 'settings' | 'maxMessageChars'>,
): AppendedMessage {
  const field = `items.${index}`;
  if (message.content.length > deps.maxMessageChars)
    throw new AppError(
      'TOO_LARGE',
      `${field}: the item has ${message.content.length} characters; the limit is ${deps.maxMessageChars}.`,
      { details: { field } },
    );
  if (message.content.includes('\u0000')) throw invalid(field, 'the item contains a NUL character');
  const { counter } = deps.settings;
  const encoding = counter.encoding;
  switch (message.role) {
    case 'user':
      if (message.content.trim() === '') throw invalid(field, 'the message is empty');
      return { role: 'user', content: message.content, tokens: counter.countMessage(message), encoding };
    case 'assistant': {
      const toolCalls = message.toolCalls.map((call) => toolCallOf(call, field));
      if (message.content.trim() === '' && toolCalls.length === 0) throw invalid(field, 'the message is empty');
      const tokens = counter.countMessage({ role: 'assistant', content: message.content, toolCalls });
      return { role: 'assistant', content: message.content, toolCalls, tokens, encoding };
    }
    case 'tool': {
      const tokens = counter.countMessage({ role: 'tool', content: message.content, toolCallId: message.toolCallId });
      return { role: 'tool', content: message.content, toolCallId: message.toolCallId, tokens, encoding };
    }
  }
}

/**
 * Appends a client's items to a conversation's thread without running a turn (POST /v1/conversations/{id}/items, a
 * conversation's starting items): user messages stay plain user messages with no answer, assistant messages are
 * complete answers, function calls and their outputs are stored as a turn stores tool calls and results. Spends the
 * send limit once, before anything is read; every item is checked before one is written; all of them are written in
 * one transaction (the thread's seq, the window), refused with CONFLICT while an answer is being written. Open tabs
 * see the new messages, a fold they make due is queued, and a conversation's opening messages title the thread.
 */
export async function appendConversationMessages(
  input: { userId: string; threadId: string; messages: readonly ClientMessage[] },
  deps: AppendConversationDeps,
): Promise<TranscriptMessage[]> {
  await spendOrRefuse(deps.sendLimiter, input.userId);
  const prepared = prepareAppendedMessages(input.messages, deps);
  return appendPreparedMessages({ userId: input.userId, threadId: input.threadId, prepared }, deps);
}

/** A client's items as the transcript stores them, counted, each checked (the bounds of appendConversationMessages). */
export function prepareAppendedMessages(
  messages: readonly ClientMessage[],
  deps: Pick<AppendConversationDeps, 'settings' | 'maxMessageChars'>,
): AppendedMessage[] {
  if (messages.length > MAX_APPENDED_ITEMS)
    throw invalid('items', `at most ${MAX_APPENDED_ITEMS} items may be added at once`);
  return messages.map((message, index) => appendedOf(message, index, deps));
}

/**
 * Appends items checked by prepareAppendedMessages (a new conversation's starting items, checked before its thread is
 * made), as appendConversationMessages does after its checks; spends nothing.
 */
export async function appendPreparedMessages(
  input: { userId: string; threadId: string; prepared: readonly AppendedMessage[] },
  deps: AppendConversationDeps,
): Promise<TranscriptMessage[]> {
  const appended = input.prepared;
  if (appended.length === 0) return [];
  const result = await deps.conversations.appendMessages({
    threadId: input.threadId,
    ownerId: input.userId,
    messages: appended,
  });
  if ('refused' in result) {
    if (result.refused === 'missing') throw new AppError('NOT_FOUND', 'No such conversation.');
    throw new AppError(
      'CONFLICT',
      'An answer in this conversation is still being written; wait for it, then add the items again.',
    );
  }
  for (const message of result.appended)
    deps.events.publish({ type: 'message-created', threadId: input.threadId, message: toMessageDto(message) });
  await enqueueFoldIfDue(input.threadId, deps);
  const opening = result.appended.some(
    (message) => message.role === 'user' && (message.seq ?? 0) <= FIRST_USER_SEQ_AT_MOST,
  );
  if (opening && deps.requestTitle)
    await deps
      .requestTitle(input.threadId)
      .catch((error: unknown) => deps.log.warn({ err: error, threadId: input.threadId }, 'could not title the thread'));
  return result.appended;
}

/** Appended messages grow the window as a turn does: a fold that makes due is queued now, not after the next turn. */
async function enqueueFoldIfDue(threadId: string, deps: AppendConversationDeps): Promise<void> {
  const context = await deps.turns.loadContext(threadId);
  if (!context || !foldDecisionFor(context, deps.settings).fold) return;
  await deps.jobs
    .enqueueFold(threadId, 'conversation items added')
    .catch((error: unknown) => deps.log.warn({ err: error, threadId }, 'could not enqueue a fold; the sweeper will'));
}
