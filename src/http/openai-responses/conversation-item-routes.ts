import { Router } from 'express';
import { z } from 'zod';
import { AppError } from '../../core/errors/app-error';
import { forgetMessage } from '../../core/memory';
import { appendConversationMessages, MAX_APPENDED_ITEMS } from '../../core/facade/append-conversation-messages';
import { appendDeps, conversationOf, ownConversation, type RouteContext } from './conversation-routes';
import {
  findConversationItem,
  itemsOfMessage,
  pageOfConversationItems,
  type ConversationItem,
} from './conversation-items';
import { parseResponseBody, responseInputOf } from './responses-request';

/** Items of one page at most (OpenAI's bound). */
const MAX_PAGE_ITEMS = 100;

const itemsQuery = z
  .object({
    after: z.string().max(200).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_ITEMS).default(20),
    order: z.enum(['asc', 'desc']).default('desc'),
    // Accepted as OpenAI documents it; nothing it names (logprobs, encrypted reasoning, …) is kept here.
    include: z.union([z.string().max(200), z.array(z.string().max(200)).max(20)]).optional(),
  })
  .loose();

const appendBody = z
  .object({
    items: z
      .array(z.object({ type: z.string().max(100).optional() }).loose())
      .min(1)
      .max(MAX_APPENDED_ITEMS),
  })
  .loose();

function itemNotFound(id: string): AppError {
  return new AppError('NOT_FOUND', `Item with id '${id}' not found.`, { details: { field: 'item_id' } });
}

/**
 * POST /v1/conversations/{id}/items appends items to the thread without running a turn (appendConversationMessages;
 * system and developer items are refused here: they are the thread's instructions, set when it opens), answered with
 * the items as the conversation now lists them;
 * GET /v1/conversations/{id}/items (cursor pages of the thread's transcript as Responses items), GET and DELETE
 * /v1/conversations/{id}/items/{item_id}; deleting an item forgets its message (a tombstone, as the web app's forget
 * does) and answers the conversation.
 */
export function conversationItemRoutes(context: RouteContext): Router {
  const router = Router();
  const { deps } = context;
  router.post('/conversations/:id/items', async (request, response) => {
    const thread = await ownConversation(request, context);
    const parsed = appendBody.safeParse(request.body ?? {});
    if (!parsed.success) {
      const field = parsed.error.issues[0]?.path.map(String).join('.') || 'body';
      throw new AppError('VALIDATION', `${field}: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
        details: { field },
      });
    }
    const input = responseInputOf(parseResponseBody({ model: context.facade.models[0], input: parsed.data.items }), {
      maxInstructionsChars: context.facade.maxClientInstructionsChars,
      continuing: true,
    });
    if (input.instructions !== null)
      throw new AppError('VALIDATION', 'items: system and developer items are set when a conversation is created', {
        details: { field: 'items' },
      });
    const appended = await appendConversationMessages(
      { userId: thread.ownerId, threadId: thread.id, messages: input.messages },
      appendDeps(context),
    );
    const data: ConversationItem[] = appended.flatMap((message): ConversationItem[] => itemsOfMessage(message));
    response.json({
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: false,
    });
  });
  router.get('/conversations/:id/items', async (request, response) => {
    const parsed = itemsQuery.safeParse(request.query);
    if (!parsed.success) {
      const field = parsed.error.issues[0]?.path.map(String).join('.') || 'query';
      throw new AppError('VALIDATION', `${field}: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
        details: { field },
      });
    }
    const thread = await ownConversation(request, context);
    response.json(await pageOfConversationItems(deps.transcript, thread.id, parsed.data));
  });
  router.get('/conversations/:id/items/:itemId', async (request, response) => {
    const thread = await ownConversation(request, context);
    const itemId = String(request.params.itemId ?? '');
    const found = await findConversationItem(deps.transcript, thread.id, itemId);
    if (!found) throw itemNotFound(itemId);
    response.json(found.item);
  });
  router.delete('/conversations/:id/items/:itemId', async (request, response) => {
    const thread = await ownConversation(request, context);
    const itemId = String(request.params.itemId ?? '');
    const found = await findConversationItem(deps.transcript, thread.id, itemId);
    if (!found) throw itemNotFound(itemId);
    const actor = { userId: thread.ownerId, admin: false };
    await forgetMessage({ actor, threadId: thread.id, messageId: found.message.id, only: true }, deps.memory);
    response.json(conversationOf(thread));
  });
  return router;
}
