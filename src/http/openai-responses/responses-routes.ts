import { Router, type Request } from 'express';
import { AppError } from '../../core/errors';
import { startChatCompletion, type ChatCompletionDeps } from '../../core/facade/start-chat-completion';
import type { HttpDeps } from '../http-deps';
import { joinInstructions } from '../openai-facade/chat-request';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { facadePrincipal, type FacadePrincipalDeps } from '../openai-facade/facade-principal';
import { checkModel, conversationOf, THREAD_ID_HEADER } from '../openai-facade/facade-request';
import { answerResponseAsJson, answerResponseAsStream, type ResponseTarget } from './response-answer';
import { responseIdOf } from './response-ids';
import { IGNORED_TOOLS_HEADER, responseToolsOf } from './response-tools';
import { parseResponseBody, responseInputOf, type ResponseBody } from './responses-request';

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
  };
}

function refuseBothStates(body: ResponseBody): void {
  if (body.previous_response_id && body.conversation)
    throw new AppError(
      'VALIDATION',
      "previous_response_id: mutually exclusive with 'conversation'; send only one of them.",
      { details: { field: 'previous_response_id' } },
    );
}

/**
 * POST /v1/responses: the Responses API over the chat route's core. The whole input with a conversation key
 * (FACADE_THREAD_HEADERS) is reconciled with the stored branches as /v1/chat/completions does; `instructions` hold
 * for this response only, system and developer items are the thread's client instructions.
 */
async function createResponse(
  request: Request,
  response: import('express').Response,
  context: { deps: HttpDeps; facade: FacadeHttpDeps; principalDeps: FacadePrincipalDeps },
): Promise<void> {
  const { deps, facade } = context;
  const raw = request.body as { user?: unknown } | undefined;
  const principal = await facadePrincipal(request, context.principalDeps, raw?.user);
  const body = parseResponseBody(request.body);
  checkModel(body.model, facade);
  refuseBothStates(body);
  const tools = responseToolsOf(body.tools ?? [], facade.serverToolNames());
  if (tools.ignored.length > 0) response.setHeader(IGNORED_TOOLS_HEADER, tools.ignored.join(', '));
  const input = responseInputOf(body, { maxInstructionsChars: facade.maxClientInstructionsChars, continuing: false });
  const responseInstructions = joinInstructions(
    [body.instructions ?? ''],
    facade.maxClientInstructionsChars,
    'instructions',
  );
  const firstUser = input.messages.find((each) => each.role === 'user')?.content ?? '';
  const started = await startChatCompletion(
    {
      userId: principal.userId,
      conversation: conversationOf(request, facade.threadHeaders, firstUser),
      messages: input.messages,
      client: { instructions: input.instructions, responseInstructions, tools: tools.tools },
    },
    chatCompletionDepsOf(deps, facade),
  );
  response.setHeader(THREAD_ID_HEADER, started.thread.id);
  const target: ResponseTarget = {
    turn: started.turn,
    names: tools.names,
    frame: {
      id: responseIdOf(facade.responseIdKey, principal.userId, started.turn.id),
      model: body.model,
      createdAt: Math.floor(Date.now() / 1000),
      instructions: body.instructions ?? null,
      previousResponseId: body.previous_response_id ?? null,
      store: body.store !== false,
      metadata: body.metadata ?? {},
      tools: body.tools ?? [],
    },
  };
  if (body.stream) await answerResponseAsStream(deps, facade, target, response);
  else await answerResponseAsJson(deps, facade, target, response);
}

/** The Responses API routes, mounted inside the /v1 router (its auth, body parser and error handler). */
export function responsesRoutes(deps: HttpDeps, facade: FacadeHttpDeps, principalDeps: FacadePrincipalDeps): Router {
  const router = Router();
  const context = { deps, facade, principalDeps };
  router.post('/responses', (request, response) => createResponse(request, response, context));
  return router;
}
