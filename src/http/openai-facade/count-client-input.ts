import type { ContextSettings } from '../../core/thread-context/context-settings';
import type { TokenCounter } from '../../core/context/token-counter';
import type { OpenAIFunctionTool } from '../../core/context/types';
import { AppError } from '../../core/errors/app-error';
import type { ClientMessage } from '../../core/ports';
import { holdsCondensedResult, offeredDefinitions } from '../../core/tools';
import { buildTurnPack } from '../../core/turn/stream-answer';
import { spendOrRefuse } from '../../core/turn/spend-or-refuse';
import type { HttpDeps } from '../http-deps';
import type { FacadeHttpDeps } from './facade-deps';

/** Characters counted per token of the context window at most: past it the input could never fit (413). */
const MAX_CHARS_PER_WINDOW_TOKEN = 8;

/** What a count reads: the client's messages and texts (instructions), its tools, and the thread it goes on from. */
export interface ClientInput {
  userId: string;
  messages: readonly ClientMessage[];
  /** Instructions sent with the input (null: none). */
  texts: readonly (string | null)[];
  /** The client's tools, offered after ours. */
  tools: readonly OpenAIFunctionTool[];
  /** The thread the input goes on from (its pack as the next call would build it), or null for a new one: read once the limit is spent. */
  thread: () => Promise<string | null>;
  /** The field a refusal names (`input`, `messages`). */
  field: string;
}

function countedChars(messages: readonly ClientMessage[], texts: readonly (string | null)[]): number {
  const all = [...messages.map((message) => message.content), ...texts.map((text) => text ?? '')];
  return all.reduce((sum, text) => sum + text.length, 0);
}

/** A client message's tokens: its text as a message, a call's name and arguments as text. */
function tokensOf(message: ClientMessage, counter: TokenCounter): number {
  if (message.role === 'user') return counter.countMessage({ role: 'user', content: message.content });
  if (message.role === 'tool')
    return counter.countMessage({ role: 'tool', content: message.content, toolCallId: message.toolCallId });
  const calls = message.toolCalls.reduce((sum, call) => sum + counter.countText(`${call.name}${call.arguments}`), 0);
  return counter.countMessage({ role: 'assistant', content: message.content }) + calls;
}

/**
 * What the pack for a client's input would cost, by our counter: going on from a thread, its pack as the next call
 * would build it (summary, window, the offered tools) plus the input; otherwise the input as a new conversation's pack
 * holds it (system prefix, instructions, the messages). 413 when the input could never fit the window; spends the send
 * limit (it reads and counts like a turn's start) before reading the thread.
 */
export async function countClientInput(
  input: ClientInput,
  deps: Pick<HttpDeps, 'settings' | 'sendLimiter' | 'turns'>,
  facade: Pick<FacadeHttpDeps, 'clientThreadTools'>,
): Promise<number> {
  const settings: ContextSettings = deps.settings;
  if (countedChars(input.messages, input.texts) > settings.profile.maxInputTokens * MAX_CHARS_PER_WINDOW_TOKEN)
    throw new AppError('TOO_LARGE', `The input is longer than the model's context window could hold.`, {
      details: { field: input.field, openaiCode: 'context_length_exceeded' },
    });
  await spendOrRefuse(deps.sendLimiter, input.userId);
  const { counter } = settings;
  const added =
    input.messages.reduce((sum, message) => sum + tokensOf(message, counter), 0) +
    input.texts.reduce((sum, text) => sum + (text ? counter.countText(text) : 0), 0);
  const threadId = await input.thread();
  const loaded = threadId ? await deps.turns.loadContext(threadId, { recall: false }) : null;
  const scope = loaded?.thread.settings.recallScope ?? settings.recallScope;
  // Offered as a turn offers them: ours (no async ones to a client), then the client's.
  const readable = loaded !== null && holdsCondensedResult(loaded);
  const offered = [...offeredDefinitions(facade.clientThreadTools(), scope, readable), ...input.tools];
  if (loaded) {
    const { pack, toolSchemaTokens } = buildTurnPack(loaded, settings, offered);
    return pack.tokens + toolSchemaTokens + added;
  }
  return (
    counter.countPack([{ role: 'system', content: settings.systemPrefix }]) + counter.countToolSchemas(offered) + added
  );
}
