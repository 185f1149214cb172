import { Router, type Request, type Response } from 'express';
import { AppError } from '../../core/errors/app-error';
import type { ClientMessage } from '../../core/ports';
import {
  continueFromAnswer,
  continueThread,
  type ContinueFromAnswerRequest,
} from '../../core/facade/continue-from-answer';
import {
  startChatCompletion,
  type ChatCompletionDeps,
  type StartedCompletion,
} from '../../core/facade/start-chat-completion';
import type { HttpDeps } from '../http-deps';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { facadePrincipal, type FacadePrincipalDeps } from '../openai-facade/facade-principal';
import { conversationOf, THREAD_ID_HEADER } from '../openai-facade/facade-request';
import { answerResponseAsJson, answerResponseAsStream, type ResponseTarget } from './response-answer';
import { answerInBackground, assertBackgroundRoom, isBackground } from './background-response';
import { conversationIdOf, responseIdOf, threadOfConversationId, turnOfResponseId } from './response-ids';
import { storedResponseRoutes } from './stored-response-routes';
import { conversationRoutes } from './conversation-routes';
import { conversationItemRoutes } from './conversation-item-routes';
import { countInputTokens } from './input-tokens-route';
import { IGNORED_TOOLS_HEADER } from './response-tools';
import type { ResponseBody } from './responses-request';
import { readResponseRequest, type ReadRequest } from './read-response-request';
import { continueAfterCompaction, continueAfterHandoff } from '../../core/facade/continue-after-compaction';
import {
  answerCompactionTrigger,
  compactConversation,
  compactionOfInput,
  invalidCompaction,
} from './compaction-routes';
import { applyContextManagement, foldedSinceItems, requestedTrigger } from './context-management';

interface RouteContext {
  deps: HttpDeps;
  facade: FacadeHttpDeps;
  principalDeps: FacadePrincipalDeps;
}

/** What the Responses routes use of the chat route's core (the same use case, the same stores). */
export function chatCompletionDepsOf(deps: HttpDeps, facade: FacadeHttpDeps): ChatCompletionDeps {
  return {
    conversations: facade.conversations,
    threads: deps.threads,
    memory: deps.memory,
    fork: deps.fork,
    turns: deps.turns,
    transcript: deps.transcript,
    maxReadMessages: facade.maxReadMessages,
    toolRoundLimiter: facade.toolRoundLimiter,
  };
}

/** The code OpenAI answers an unknown previous_response_id with (clients fall back to sending the whole input). */
export const PREVIOUS_RESPONSE_NOT_FOUND = 'previous_response_not_found';

function previousResponseNotFound(id: string): AppError {
  return new AppError('VALIDATION', `Previous response with id '${id}' not found.`, {
    details: { field: 'previous_response_id', openaiCode: PREVIOUS_RESPONSE_NOT_FOUND },
  });
}

const firstUserOf = (messages: readonly ClientMessage[]) =>
  messages.find((each) => each.role === 'user')?.content ?? '';

/** The core's refusals name the chat route's `messages`: here they are the request's `input`. */
async function namingInput<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AppError && error.details?.field === 'messages')
      throw new AppError(error.code, error.message.replace(/^messages/, 'input'), {
        details: { ...error.details, field: 'input' },
        cause: error,
      });
    throw error;
  }
}

/** previous_response_id: the new input goes on from that answer (on a fork when it is not its thread's newest). */
async function continueFrom(
  id: string,
  request: Omit<ContinueFromAnswerRequest, 'turnId'>,
  context: RouteContext,
): Promise<StartedCompletion> {
  const { deps, facade } = context;
  const turnId = turnOfResponseId(facade.responseIdKey, request.userId, id);
  if (!turnId) throw previousResponseNotFound(id);
  const started = await continueFromAnswer(
    { ...request, turnId },
    { ...chatCompletionDepsOf(deps, facade), turns: deps.turns, transcript: deps.transcript },
  );
  if (!started) throw previousResponseNotFound(id);
  return started;
}

/** The `conversation` a request names (an id, or `{id}`), or null. */
function conversationParamOf(body: ResponseBody): string | null {
  if (!body.conversation) return null;
  return typeof body.conversation === 'string' ? body.conversation : body.conversation.id;
}

/** `conversation`: the new input is appended to that thread; an unknown or another user's is 404. */
async function appendTo(
  id: string,
  request: Omit<ContinueFromAnswerRequest, 'turnId'>,
  context: RouteContext,
): Promise<StartedCompletion> {
  const notFound = new AppError('NOT_FOUND', `Conversation with id '${id}' not found.`, {
    details: { field: 'conversation' },
  });
  const threadId = threadOfConversationId(id);
  if (!threadId) throw notFound;
  const started = await continueThread(
    { ...request, threadId },
    {
      ...chatCompletionDepsOf(context.deps, context.facade),
      turns: context.deps.turns,
      transcript: context.deps.transcript,
    },
  );
  if (!started) throw notFound;
  return started;
}

/** Queues the turn a request asks for: after a response, in a conversation, or reconciled as a stateless history. */
function startResponse(
  request: Request,
  read: ReadRequest,
  userId: string,
  context: RouteContext,
): Promise<StartedCompletion> {
  const { body, input, client } = read;
  const conversationId = conversationParamOf(body);
  const continued = { userId, messages: input.messages, client };
  return namingInput(async () => {
    const compaction = compactionOfInput(read, userId, context.facade);
    if (compaction && !body.previous_response_id && conversationId === null) {
      const started = await continueAfterCompaction(
        { ...continued, compaction },
        chatCompletionDepsOf(context.deps, context.facade),
      );
      if (!started) throw invalidCompaction(input.compaction?.field ?? 'input');
      return started;
    }
    const stateless = !body.previous_response_id && conversationId === null;
    if (input.handoff && stateless) {
      const conversation = conversationOf(request, context.facade.threadHeaders, firstUserOf(input.messages));
      const started = await continueAfterHandoff(
        { ...continued, conversation, summary: input.handoff.summary },
        chatCompletionDepsOf(context.deps, context.facade),
      );
      if (started) return started;
    }
    if (body.previous_response_id) return continueFrom(body.previous_response_id, continued, context);
    if (conversationId !== null) return appendTo(conversationId, continued, context);
    const conversation = conversationOf(request, context.facade.threadHeaders, firstUserOf(input.messages));
    return startChatCompletion({ ...continued, conversation }, chatCompletionDepsOf(context.deps, context.facade));
  });
}

/** How the Response object of a started turn is framed (its id signed for the user). */
function targetOf(
  read: ReadRequest,
  started: StartedCompletion,
  userId: string,
  facade: FacadeHttpDeps,
): ResponseTarget {
  const { body } = read;
  return {
    turn: started.turn,
    names: read.tools.names,
    frame: {
      id: responseIdOf(facade.responseIdKey, userId, started.turn.id, { stored: body.store !== false }),
      model: body.model,
      createdAt: Math.floor(Date.now() / 1000),
      instructions: body.instructions ?? null,
      previousResponseId: body.previous_response_id ?? null,
      store: body.store !== false,
      metadata: body.metadata ?? {},
      conversation: conversationParamOf(body) !== null ? { id: conversationIdOf(started.thread.id) } : null,
      tools: body.tools ?? [],
    },
  };
}

/**
 * POST /v1/responses: the Responses API over the chat route's core. The whole input with a conversation key
 * (FACADE_THREAD_HEADERS) is reconciled with the stored branches as /v1/chat/completions does; `instructions` hold
 * for this response only, system and developer items are the thread's client instructions.
 */
async function createResponse(request: Request, response: Response, context: RouteContext): Promise<void> {
  const { deps, facade } = context;
  const raw = request.body as { user?: unknown } | undefined;
  const principal = await facadePrincipal(request, context.principalDeps, raw?.user);
  const read = readResponseRequest(request.body, facade);
  if (read.tools.ignored.length > 0) response.setHeader(IGNORED_TOOLS_HEADER, read.tools.ignored.join(', '));
  if (read.input.compactionTrigger) {
    await answerCompactionTrigger(request, response, { read, userId: principal.userId }, context);
    return;
  }
  const background = isBackground(read.body);
  if (background) await assertBackgroundRoom(principal.userId, facade);
  const trigger = requestedTrigger(read, deps);
  const started = await startResponse(request, read, principal.userId, context);
  response.setHeader(THREAD_ID_HEADER, started.thread.id);
  const managed = trigger !== undefined;
  if (managed) await applyContextManagement({ trigger, started, userId: principal.userId }, context);
  const target: ResponseTarget = {
    ...targetOf(read, started, principal.userId, facade),
    ...(managed ? { extraItems: () => foldedSinceItems({ started, userId: principal.userId }, context) } : {}),
  };
  if (background) await answerInBackground(deps, facade, target, response, { stream: read.body.stream === true });
  else if (read.body.stream) await answerResponseAsStream(deps, facade, target, response);
  else await answerResponseAsJson(deps, facade, target, response);
}

/** The Responses API routes, mounted inside the /v1 router (its auth, body parser and error handler). */
export function responsesRoutes(deps: HttpDeps, facade: FacadeHttpDeps, principalDeps: FacadePrincipalDeps): Router {
  const router = Router();
  const context = { deps, facade, principalDeps };
  router.post('/responses', (request, response) => createResponse(request, response, context));
  router.post('/responses/input_tokens', (request, response) => countInputTokens(request, response, context));
  router.post('/responses/compact', (request, response) => compactConversation(request, response, context));
  router.use(storedResponseRoutes(context));
  router.use(conversationRoutes(context));
  router.use(conversationItemRoutes(context));
  return router;
}
