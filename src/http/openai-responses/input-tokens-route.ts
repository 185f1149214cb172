import type { Request, Response } from 'express';
import { AppError } from '../../core/errors/app-error';
import { findResponse } from '../../core/facade/find-response';
import type { HttpDeps } from '../http-deps';
import { countClientInput } from '../openai-facade/count-client-input';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { facadePrincipal, type FacadePrincipalDeps } from '../openai-facade/facade-principal';
import { threadOfConversationId, turnOfResponseId } from './response-ids';
import type { ResponseBody } from './responses-request';
import { readResponseRequest } from './read-response-request';
import { compactionOfInput, invalidCompaction } from './compaction-routes';

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
  const inputTokens = await countClientInput(
    {
      userId: principal.userId,
      messages: input.messages,
      texts: [input.instructions, client.responseInstructions ?? null],
      tools: tools.tools,
      thread: async () => {
        // A compaction item stands for its thread (checked for this user: 400 when it is not theirs).
        const compaction = compactionOfInput(read, principal.userId, facade);
        if (!compaction) return threadOf(body, principal.userId, context);
        const compacted = await deps.threads.findThread(compaction.threadId, principal.userId);
        if (!compacted) throw invalidCompaction(input.compaction?.field ?? 'input');
        return compacted.id;
      },
      field: 'input',
    },
    deps,
    facade,
  );
  response.json({ object: 'response.input_tokens', input_tokens: inputTokens });
}
