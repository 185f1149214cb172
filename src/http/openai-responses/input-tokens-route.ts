import type { Request, Response } from 'express';
import type { TokenCounter } from '../../core/context/token-counter';
import { AppError } from '../../core/errors';
import type { ClientMessage } from '../../core/ports';
import { findResponse } from '../../core/facade/find-response';
import { definitionsForRecallScope } from '../../core/tools';
import { buildTurnPack } from '../../core/turn/stream-answer';
import { spendOrRefuse } from '../../core/turn/spend-or-refuse';
import type { HttpDeps } from '../http-deps';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { facadePrincipal, type FacadePrincipalDeps } from '../openai-facade/facade-principal';
import { threadOfConversationId, turnOfResponseId } from './response-ids';
import type { ResponseBody } from './responses-request';
import { readResponseRequest } from './read-response-request';
import { compactionOfInput, invalidCompaction } from './compaction-routes';

/** Characters counted per token of the context window at most: past it the input could never fit (413). */
const MAX_CHARS_PER_WINDOW_TOKEN = 8;

interface RouteContext {
  deps: HttpDeps;
  facade: FacadeHttpDeps;
  principalDeps: FacadePrincipalDeps;
}

/** The thread a request goes on from (previous_response_id or conversation), or null for a stateless one. */
async function threadOf(body: ResponseBody, userId: string, context: RouteContext): Promise<string | null> {
  const { deps, facade } = context;
  if (body.previous_response_id) {
    const turnId = turnOfResponseId(facade.responseIdKey, userId, body.previous_response_id);
    const found = turnId ? await findResponse({ userId, turnId }, deps) : null;
    if (!found)
      throw new AppError('VALIDATION', `Previous response with id '${body.previous_response_id}' not found.`, {
        details: { field: 'previous_response_id', openaiCode: 'previous_response_not_found' },
      });
    return found.thread.id;
  }
  if (!body.conversation) return null;
  const id = typeof body.conversation === 'string' ? body.conversation : body.conversation.id;
  const threadId = threadOfConversationId(id);
  const thread = threadId ? await deps.threads.findThread(threadId, userId) : null;
  if (!thread)
    throw new AppError('NOT_FOUND', `Conversation with id '${id}' not found.`, { details: { field: 'conversation' } });
  return thread.id;
}

function countedChars(messages: readonly ClientMessage[], extra: readonly (string | null)[]): number {
  const texts = [...messages.map((message) => message.content), ...extra.map((text) => text ?? '')];
  return texts.reduce((sum, text) => sum + text.length, 0);
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
 * POST /v1/responses/input_tokens: what the pack for this input would cost, by our counter. Going on from a thread
 * (previous_response_id, conversation): its pack as the next call would build it (summary, window, the offered tools)
 * plus the new input; otherwise the input as a new conversation's pack holds it (system prefix, instructions, the
 * messages). Spends the send limit (it reads and counts like a turn's start).
 */
export async function countInputTokens(request: Request, response: Response, context: RouteContext): Promise<void> {
  const { deps, facade } = context;
  const raw = request.body as { user?: unknown } | undefined;
  const principal = await facadePrincipal(request, context.principalDeps, raw?.user);
  // The model may be left out here (OpenAI's counts take it optionally): CHAT_MODEL.
  const read = readResponseRequest({ model: facade.models[0], ...(request.body as object | undefined) }, facade);
  const { body, tools, input, client } = read;
  const instructions = client.responseInstructions ?? null;
  const { settings } = deps;
  const limit = settings.profile.maxInputTokens * MAX_CHARS_PER_WINDOW_TOKEN;
  if (countedChars(input.messages, [input.instructions, instructions]) > limit)
    throw new AppError('TOO_LARGE', `The input is longer than the model's context window could hold.`, {
      details: { field: 'input', openaiCode: 'context_length_exceeded' },
    });
  await spendOrRefuse(deps.sendLimiter, principal.userId);
  // A compaction item stands for its thread (checked for this user: 400 when it is not theirs).
  const compaction = compactionOfInput(read, principal.userId, facade);
  const compacted = compaction ? await deps.threads.findThread(compaction.threadId, principal.userId) : null;
  if (compaction && !compacted) throw invalidCompaction(input.compaction?.field ?? 'input');
  const threadId = compacted ? compacted.id : await threadOf(body, principal.userId, context);
  const { counter } = settings;
  const added =
    input.messages.reduce((sum, message) => sum + tokensOf(message, counter), 0) +
    [input.instructions, instructions].reduce((sum, text) => sum + (text ? counter.countText(text) : 0), 0);
  const loaded = threadId ? await deps.turns.loadContext(threadId, { recall: false }) : null;
  const scope = loaded?.thread.settings.recallScope ?? settings.recallScope;
  // Offered as a turn offers them: ours (no async ones to a client), then the client's.
  const offered = [...definitionsForRecallScope(facade.clientThreadTools(), scope), ...tools.tools];
  let base =
    counter.countPack([{ role: 'system', content: settings.systemPrefix }]) + counter.countToolSchemas(offered);
  if (loaded) {
    const { pack, toolSchemaTokens } = buildTurnPack(loaded, settings, offered);
    base = pack.tokens + toolSchemaTokens;
  }
  response.json({ object: 'response.input_tokens', input_tokens: base + added });
}
