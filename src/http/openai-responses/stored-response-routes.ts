import { Router, type Request } from 'express';
import { z } from 'zod';
import { AppError } from '../../core/errors/app-error';
import { answerMessagesOf, findResponse, type StoredResponse } from '../../core/facade/find-response';
import { forgetMessage } from '../../core/memory';
import type { HttpDeps } from '../http-deps';
import { outcomeOf, usageOf } from '../openai-facade/completion-response';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { facadePrincipal, type FacadePrincipalDeps } from '../openai-facade/facade-principal';
import { turnOfResponseId } from './response-ids';
import {
  outputItemsOf,
  responseObject,
  responseUsageOf,
  type ResponseFrame,
  type ResponseStatus,
} from './response-object';
import { cancelResponse, resumeResponseStream } from './background-response';

/** Items of one input_items page at most (OpenAI's bound). */
const MAX_PAGE_ITEMS = 100;

const pageQuery = z
  .object({
    after: z.string().max(200).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_ITEMS).default(20),
    order: z.enum(['asc', 'desc']).default('desc'),
  })
  .loose();

/** GET /v1/responses/{id}'s query: `stream=true` resumes the event stream after `starting_after`. */
const retrieveQuery = z
  .object({
    stream: z.enum(['true', 'false']).optional(),
    starting_after: z.coerce.number().int().min(-1).max(1_000_000_000).optional(),
    include: z.union([z.string().max(200), z.array(z.string().max(200)).max(20)]).optional(),
  })
  .loose();

/** A query, or a 400 naming its first wrong field. */
function parseQuery<T>(schema: z.ZodType<T>, query: unknown): T {
  const parsed = schema.safeParse(query);
  if (parsed.success) return parsed.data;
  const field = parsed.error.issues[0]?.path.map(String).join('.') || 'query';
  throw new AppError('VALIDATION', `${field}: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
    details: { field },
  });
}

interface RouteContext {
  deps: HttpDeps;
  facade: FacadeHttpDeps;
  principalDeps: FacadePrincipalDeps;
}

function responseNotFound(id: string): AppError {
  return new AppError('NOT_FOUND', `Response with id '${id}' not found.`, { details: { field: 'response_id' } });
}

/** The stored response a path names for the caller, or 404 (unknown, tampered, another user's, deleted). */
async function storedResponseOf(request: Request, context: RouteContext): Promise<StoredResponse> {
  const principal = await facadePrincipal(request, context.principalDeps);
  const id = String(request.params.id ?? '');
  const turnId = turnOfResponseId(context.facade.responseIdKey, principal.userId, id);
  const found = turnId
    ? await findResponse({ userId: principal.userId, turnId }, { ...context.deps, turns: context.deps.turns })
    : null;
  if (!found) throw responseNotFound(id);
  return found;
}

const STATUS: Record<string, ResponseStatus> = {
  queued: 'queued',
  running: 'in_progress',
  complete: 'completed',
  error: 'failed',
  cancelled: 'cancelled',
};

/** How a stored response is framed (what the request framed it with is not kept: model, tools, metadata). */
function storedFrameOf(stored: StoredResponse, id: string, facade: FacadeHttpDeps): ResponseFrame {
  return {
    id,
    model: facade.models[0] ?? '',
    createdAt: Math.floor(stored.turn.createdAt.getTime() / 1000),
    instructions: null,
    previousResponseId: null,
    store: true,
    metadata: {},
    conversation: null,
    tools: [],
  };
}

/** A stored response as a Response object, in the state its turn is in now. */
async function retrieve(stored: StoredResponse, id: string, context: RouteContext) {
  const { deps, facade } = context;
  const { turn } = stored;
  const status = STATUS[turn.status] ?? 'in_progress';
  const complete = status === 'completed';
  const frame = storedFrameOf(stored, id, facade);
  return responseObject(frame, {
    status,
    output: complete ? outputItemsOf(turn.id, await outcomeOf(deps, facade, turn.id), new Map()) : [],
    usage: complete ? responseUsageOf(await usageOf(facade, turn.id)) : null,
    error:
      status === 'failed' ? { code: turn.error?.code ?? 'server_error', message: turn.error?.message ?? '' } : null,
  });
}

/** The input a response answered: its user message (a tool round's results are part of the answer before it). */
async function inputItemsOf(stored: StoredResponse, deps: HttpDeps) {
  const { turn, thread } = stored;
  if (!turn.userMessageId) return [];
  const message =
    stored.messages.find((each) => each.id === turn.userMessageId) ??
    (await deps.transcript.findMessage(thread.id, turn.userMessageId));
  if (!message || message.deleted) return [];
  return [
    {
      type: 'message' as const,
      id: `msg_${message.id.replace(/-/g, '')}`,
      role: 'user' as const,
      status: 'completed' as const,
      content: [{ type: 'input_text' as const, text: message.content }],
    },
  ];
}

/** One cursor page of items (OpenAI's list shape). */
function pageOf<T extends { id: string }>(items: T[], query: z.infer<typeof pageQuery>) {
  const ordered = query.order === 'desc' ? [...items].reverse() : items;
  const start = query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
  const data = ordered.slice(start, start + query.limit);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + query.limit < ordered.length,
  };
}

/**
 * GET and DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items: a response is the turn that answered it.
 * GET with `stream=true` sends its events (after `starting_after`: background-response.ts); POST …/cancel stops it.
 * Deleting it forgets its answer in the transcript (tombstones, as the web app's forget does); the user message stays.
 */
export function storedResponseRoutes(context: RouteContext): Router {
  const router = Router();
  router.get('/responses/:id', async (request, response) => {
    const query = parseQuery(retrieveQuery, request.query);
    const stored = await storedResponseOf(request, context);
    const id = String(request.params.id);
    if (query.stream === 'true') {
      const frame = storedFrameOf(stored, id, context.facade);
      const resume = { turn: stored.turn, frame, startingAfter: query.starting_after ?? -1 };
      await resumeResponseStream(context.deps, context.facade, resume, response);
      return;
    }
    response.json(await retrieve(stored, id, context));
  });
  router.post('/responses/:id/cancel', async (request, response) => {
    const stored = await storedResponseOf(request, context);
    await cancelResponse(context.deps, context.facade, stored.turn);
    const current = await findResponse(
      { userId: stored.thread.ownerId, turnId: stored.turn.id },
      { ...context.deps, turns: context.deps.turns },
    );
    response.json(await retrieve(current ?? stored, String(request.params.id), context));
  });
  router.delete('/responses/:id', async (request, response) => {
    const stored = await storedResponseOf(request, context);
    const actor = { userId: stored.thread.ownerId, admin: false };
    for (const message of answerMessagesOf(stored).filter((each) => !each.deleted))
      await forgetMessage(
        { actor, threadId: stored.thread.id, messageId: message.id, only: true },
        context.deps.memory,
      );
    response.json({ id: String(request.params.id), object: 'response', deleted: true });
  });
  router.get('/responses/:id/input_items', async (request, response) => {
    const parsed = pageQuery.safeParse(request.query);
    if (!parsed.success) {
      const field = parsed.error.issues[0]?.path.map(String).join('.') || 'query';
      throw new AppError('VALIDATION', `${field}: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
        details: { field },
      });
    }
    const stored = await storedResponseOf(request, context);
    response.json(pageOf(await inputItemsOf(stored, context.deps), parsed.data));
  });
  return router;
}
