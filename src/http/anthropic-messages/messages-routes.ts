import { Router, type Request, type Response } from 'express';
import { bearerToken } from '../../auth/token-service';
import { AppError } from '../../core/errors/app-error';
import { isAuxiliaryRequest } from '../../core/facade/answer-auxiliary';
import { startChatCompletion } from '../../core/facade/start-chat-completion';
import type { HttpDeps } from '../http-deps';
import { auxiliaryDepsOf } from '../openai-facade/auxiliary-response';
import { countClientInput } from '../openai-facade/count-client-input';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { facadePrincipal, type CredentialSource, type FacadePrincipalDeps } from '../openai-facade/facade-principal';
import { conversationOf, THREAD_ID_HEADER } from '../openai-facade/facade-request';
import { frontDoorGate, principalDepsOf } from '../openai-facade/front-door-gate';
import { IGNORED_TOOLS_HEADER } from '../openai-responses/response-tools';
import { chatCompletionDepsOf } from '../openai-responses/responses-routes';
import { requestIdOf } from './anthropic-errors';
import { answerAuxiliaryMessage } from './auxiliary-message';
import { answerMessageAsJson, answerMessageAsStream } from './message-answer';
import {
  readCountTokensRequest,
  readMessagesRequest,
  type MessagesBody,
  type ReadMessagesRequest,
} from './messages-request';

/** Where the Messages routes are mounted. */
export const MESSAGES_PATH = '/v1/messages';

/** Anthropic's clients send their key as `x-api-key` (the SDK), others as a bearer token (Claude Code's auth token). */
export const API_KEY_CREDENTIAL: CredentialSource = {
  of: (request) => {
    const key = request.headers['x-api-key'];
    if (typeof key === 'string' && key.trim() !== '') return key.trim();
    return bearerToken(request.headers.authorization);
  },
  missing: 'An API key is required (x-api-key, or Authorization: Bearer): a user token, or a service key.',
  bodyUser: 'metadata.user_id',
};

interface RouteContext {
  deps: HttpDeps;
  facade: FacadeHttpDeps;
  principalDeps: FacadePrincipalDeps;
}

/** The end user a service key's request names in its body: `metadata.user_id`. */
function bodyUserOf(request: Request): unknown {
  return (request.body as { metadata?: { user_id?: unknown } } | undefined)?.metadata?.user_id;
}

const firstUserOf = (messages: readonly { role: string; content: string }[]) =>
  messages.find((each) => each.role === 'user')?.content ?? '';

/** A background request (FACADE_AUXILIARY_PREFIXES), answered statelessly; false when the request is a turn. */
async function answeredAsAuxiliary(
  read: ReadMessagesRequest<MessagesBody>,
  userId: string,
  context: RouteContext,
  response: Response,
): Promise<boolean> {
  if (!isAuxiliaryRequest(read.messages, context.facade.auxiliaryPrefixes)) return false;
  const target = {
    userId,
    model: read.body.model,
    instructions: read.client.instructions,
    content: read.messages[0]?.content ?? '',
    stream: read.body.stream === true,
  };
  await answerAuxiliaryMessage(target, auxiliaryDepsOf(context.deps, context.facade), response);
  return true;
}

/**
 * POST /v1/messages: Anthropic's Messages API over the chat route's core. The whole history with a conversation key
 * (FACADE_THREAD_HEADERS) is reconciled with the stored branches as /v1/chat/completions does; `system` is the thread's
 * client instructions, the client's tools are offered with ours.
 */
async function createMessage(request: Request, response: Response, context: RouteContext): Promise<void> {
  const { deps, facade } = context;
  const principal = await facadePrincipal(request, context.principalDeps, bodyUserOf(request));
  const read = readMessagesRequest(request.body, facade);
  if (read.tools.ignored.length > 0) response.setHeader(IGNORED_TOOLS_HEADER, read.tools.ignored.join(', '));
  if (await answeredAsAuxiliary(read, principal.userId, context, response)) return;
  const started = await startChatCompletion(
    {
      userId: principal.userId,
      conversation: conversationOf(request, facade.threadHeaders, firstUserOf(read.messages)),
      messages: read.messages,
      client: read.client,
    },
    chatCompletionDepsOf(deps, facade),
  );
  response.setHeader(THREAD_ID_HEADER, started.thread.id);
  const target = {
    turn: started.turn,
    model: read.body.model,
    maxTokens: read.body.max_tokens,
    names: read.tools.names,
  };
  if (read.body.stream) await answerMessageAsStream(deps, facade, target, response);
  else await answerMessageAsJson(deps, facade, target, response);
}

/**
 * POST /v1/messages/count_tokens: what the pack for these messages would cost, by our counter, as a new
 * conversation's pack holds them (system prefix, `system`, our tools and the client's, the messages). Spends the send
 * limit.
 */
async function countTokens(request: Request, response: Response, context: RouteContext): Promise<void> {
  const principal = await facadePrincipal(request, context.principalDeps, bodyUserOf(request));
  const read = readCountTokensRequest(request.body, context.facade);
  const inputTokens = await countClientInput(
    {
      userId: principal.userId,
      messages: read.messages,
      texts: [read.client.instructions],
      tools: read.client.tools,
      thread: () => Promise.resolve(null),
      field: 'messages',
    },
    context.deps,
    context.facade,
  );
  response.json({ input_tokens: inputTokens });
}

/**
 * Anthropic's front door, mounted at /v1/messages before the OpenAI routes: POST / (streamed or not) and POST
 * /count_tokens, with the same gate as /v1 but the key in `x-api-key` as well. Mount anthropicErrorHandler after it:
 * every failure (a body that is not JSON or too large, a refused key) in Anthropic's shape.
 */
export function messagesRoutes(deps: HttpDeps, facade: FacadeHttpDeps): Router {
  const router = Router();
  const context = { deps, facade, principalDeps: principalDepsOf(deps, facade, API_KEY_CREDENTIAL) };
  router.use((_request, response, next) => {
    const requestId = requestIdOf(response);
    if (requestId) response.setHeader('request-id', requestId);
    next();
  });
  router.use(...frontDoorGate(facade, context.principalDeps));
  router.post('/', (request, response) => createMessage(request, response, context));
  router.post('/count_tokens', (request, response) => countTokens(request, response, context));
  router.use((_request, _response, next) =>
    next(
      new AppError(
        'NOT_FOUND',
        'No such route of the Messages API here (POST /v1/messages, POST /v1/messages/count_tokens).',
      ),
    ),
  );
  return router;
}
