import { Router } from 'express';
import { z } from 'zod';
import { AppError } from '../../core/errors';
import { forgetMessage } from '../../core/memory';
import { conversationOf, ownConversation, type RouteContext } from './conversation-routes';
import { findConversationItem, pageOfConversationItems } from './conversation-items';

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

function itemNotFound(id: string): AppError {
  return new AppError('NOT_FOUND', `Item with id '${id}' not found.`, { details: { field: 'item_id' } });
}

/**
 * GET /v1/conversations/{id}/items (cursor pages of the thread's transcript as Responses items), GET and DELETE
 * /v1/conversations/{id}/items/{item_id}; deleting an item forgets its message (a tombstone, as the web app's forget
 * does) and answers the conversation.
 */
export function conversationItemRoutes(context: RouteContext): Router {
  const router = Router();
  const { deps } = context;
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
