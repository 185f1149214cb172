import { Router, type Request } from 'express';
import { z } from 'zod';
import { AppError } from '../../core/errors/app-error';
import {
  appendPreparedMessages,
  prepareAppendedMessages,
  type AppendConversationDeps,
} from '../../core/facade/append-conversation-messages';
import { spendOrRefuse } from '../../core/turn/spend-or-refuse';
import type { Thread } from '../../core/domain/types';
import type { HttpDeps } from '../http-deps';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { facadePrincipal, type FacadePrincipalDeps } from '../openai-facade/facade-principal';
import { conversationIdOf, threadOfConversationId } from './response-ids';
import { parseResponseBody, responseInputOf } from './responses-request';

/** Most items a conversation may start with (OpenAI's bound). */
export const MAX_STARTING_ITEMS = 20;

/** Most metadata pairs a conversation holds (OpenAI's bound). */
export const MAX_METADATA_PAIRS = 16;

const metadata = z
  .record(z.string().max(64), z.string().max(512))
  .refine((value) => Object.keys(value).length <= MAX_METADATA_PAIRS, {
    message: `at most ${MAX_METADATA_PAIRS} pairs`,
  });

const conversationBody = z
  .object({
    items: z
      .array(z.object({ type: z.string().max(100).optional() }).loose())
      .max(MAX_STARTING_ITEMS)
      .nullable()
      .optional(),
    metadata: metadata.nullable().optional(),
  })
  .loose();

const updateBody = z.object({ metadata }).loose();

/** A body, or a 400 naming its first wrong field. */
function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const field = parsed.error.issues[0]?.path.map(String).join('.') || 'body';
  throw invalid(field, parsed.error.issues[0]?.message ?? 'invalid');
}

export interface RouteContext {
  deps: HttpDeps;
  facade: FacadeHttpDeps;
  principalDeps: FacadePrincipalDeps;
}

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION', `${field}: ${message}`, { details: { field } });
}

/** A thread as a Conversation object. */
export function conversationOf(thread: Thread) {
  return {
    id: conversationIdOf(thread.id),
    object: 'conversation' as const,
    created_at: Math.floor(thread.createdAt.getTime() / 1000),
    metadata: thread.settings.conversationMetadata ?? {},
  };
}

/** What appending items needs. */
export function appendDeps(context: RouteContext): AppendConversationDeps {
  const { deps, facade } = context;
  return {
    conversations: facade.conversations,
    turns: deps.turns,
    sendLimiter: deps.sendLimiter,
    settings: deps.settings,
    maxMessageChars: deps.limits.maxMessageChars,
    events: deps.events,
    jobs: deps.memory.jobs,
    log: deps.log,
    ...(deps.requestTitle ? { requestTitle: deps.requestTitle } : {}),
  };
}

/** The caller's thread a path's conversation id names, or 404 (malformed, unknown, another user's). */
export async function ownConversation(request: Request, context: RouteContext): Promise<Thread> {
  const principal = await facadePrincipal(request, context.principalDeps);
  const id = String(request.params.id ?? '');
  const threadId = threadOfConversationId(id);
  const thread = threadId ? await context.deps.threads.findThread(threadId, principal.userId) : null;
  if (!thread) throw new AppError('NOT_FOUND', `Conversation with id '${id}' not found.`, { details: { field: 'id' } });
  return thread;
}

/**
 * POST /v1/conversations opens a thread (starting items: its system and developer messages are the thread's client
 * instructions, the others are appended as POST …/items does; spends the send limit once), GET names it, POST replaces
 * its metadata (kept in the thread's settings; spends the send limit), DELETE deletes the thread as the web app does.
 * The items routes are in conversation-item-routes.ts.
 */
export function conversationRoutes(context: RouteContext): Router {
  const router = Router();
  const { deps, facade } = context;
  router.post('/conversations', async (request, response) => {
    const raw = request.body as { user?: unknown } | undefined;
    const principal = await facadePrincipal(request, context.principalDeps, raw?.user);
    const parsed = parseBody(conversationBody, request.body);
    const items = parsed.items ?? [];
    const input = responseInputOf(parseResponseBody({ model: facade.models[0], input: items }), {
      maxInstructionsChars: facade.maxClientInstructionsChars,
      continuing: false,
    });
    // Every starting item is checked before the thread is made: a refused one leaves no conversation behind.
    const prepared = prepareAppendedMessages(input.messages, appendDeps(context));
    await spendOrRefuse(deps.sendLimiter, principal.userId);
    // Untitled (the default title): its first exchange, or its opening items, title it in the web app's list.
    const thread = await deps.threads.createThread({
      ownerId: principal.userId,
      maxThreads: deps.limits.maxThreadsPerUser,
    });
    await facade.conversations.setClientSettings({
      threadId: thread.id,
      settings: { instructions: input.instructions, tools: [] },
    });
    const given = parsed.metadata ?? {};
    if (Object.keys(given).length > 0)
      await facade.conversations.setConversationMetadata({ threadId: thread.id, metadata: given });
    await appendPreparedMessages({ userId: principal.userId, threadId: thread.id, prepared }, appendDeps(context));
    response.json({ ...conversationOf(thread), metadata: given });
  });
  router.get('/conversations/:id', async (request, response) => {
    response.json(conversationOf(await ownConversation(request, context)));
  });
  router.post('/conversations/:id', async (request, response) => {
    const thread = await ownConversation(request, context);
    const { metadata: given } = parseBody(updateBody, request.body);
    await spendOrRefuse(deps.sendLimiter, thread.ownerId);
    await facade.conversations.setConversationMetadata({ threadId: thread.id, metadata: given });
    response.json({ ...conversationOf(thread), metadata: given });
  });
  router.delete('/conversations/:id', async (request, response) => {
    const thread = await ownConversation(request, context);
    await deps.deleteThread(thread.id);
    response.json({ id: conversationIdOf(thread.id), object: 'conversation.deleted', deleted: true });
  });
  return router;
}
