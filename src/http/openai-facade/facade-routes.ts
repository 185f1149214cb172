import { Router } from 'express';
import { AppError } from '../../core/errors/app-error';
import { isAuxiliaryRequest } from '../../core/facade/answer-auxiliary';
import { startChatCompletion } from '../../core/facade/start-chat-completion';
import type { HttpDeps } from '../http-deps';
import {
  clientHistoryOf,
  clientToolsOf,
  inRequestIndexes,
  parseChatCompletionBody,
  type ChatCompletionBody,
} from './chat-request';
import { answerAuxiliaryRequest, auxiliaryDepsOf } from './auxiliary-response';
import { answerAsJson, answerAsStream } from './completion-response';
import type { FacadeHttpDeps } from './facade-deps';
import { facadePrincipal, SERVICE_ONLY } from './facade-principal';
import { frontDoorGate, principalDepsOf } from './front-door-gate';
import { checkToolDescription } from './tool-description-limit';
import { checkModel, conversationOf, THREAD_ID_HEADER } from './facade-request';
import { chatCompletionDepsOf, responsesRoutes } from '../openai-responses/responses-routes';

/** When the server started: `created` of the models it lists. */
const STARTED = Math.floor(Date.now() / 1000);

/** A client tool may not take the name of one of ours (the model could not tell them apart). */
function checkClientTools(body: ChatCompletionBody, facade: FacadeHttpDeps): void {
  const ours = facade.serverToolNames();
  const names = (body.tools ?? []).map((tool) => tool.function.name);
  const repeated = names.findIndex((name, index) => names.indexOf(name) !== index);
  if (repeated >= 0)
    throw new AppError('VALIDATION', `tools.${repeated}.function.name: "${names[repeated]}" is offered twice.`, {
      details: { field: `tools.${repeated}.function.name` },
    });
  (body.tools ?? []).forEach((tool, index) =>
    checkToolDescription(
      tool.function.description,
      facade.maxToolDescriptionChars,
      `tools.${index}.function.description`,
    ),
  );
  const clash = (body.tools ?? []).findIndex((tool) => ours.has(tool.function.name));
  if (clash < 0) return;
  const name = body.tools?.[clash]?.function.name ?? '';
  throw new AppError(
    'VALIDATION',
    `tools.${clash}.function.name: "${name}" is the name of one of this server's tools; rename yours.`,
    { details: { field: `tools.${clash}.function.name` } },
  );
}

/**
 * The OpenAI-compatible front door, mounted at /v1: GET /models and POST /chat/completions (streamed or not), over
 * the normal turn pipeline. Mount openAIErrorHandler after it: errors in OpenAI's shape.
 */
export function facadeRoutes(deps: HttpDeps, facade: FacadeHttpDeps): Router {
  const router = Router();
  const principalDeps = principalDepsOf(deps, facade);
  router.use(...frontDoorGate(facade, principalDeps));

  router.get('/models', async (request, response) => {
    await facadePrincipal(request, principalDeps, SERVICE_ONLY);
    response.json({
      object: 'list',
      data: facade.models.map((id) => ({ id, object: 'model', created: STARTED, owned_by: 'split-context-chat' })),
    });
  });

  router.get('/models/:model', async (request, response) => {
    await facadePrincipal(request, principalDeps, SERVICE_ONLY);
    checkModel(request.params.model, facade);
    response.json({ id: request.params.model, object: 'model', created: STARTED, owned_by: 'split-context-chat' });
  });

  router.post('/chat/completions', async (request, response) => {
    const raw = request.body as { user?: unknown } | undefined;
    const principal = await facadePrincipal(request, principalDeps, raw?.user);
    const body = parseChatCompletionBody(request.body);
    checkModel(body.model, facade);
    checkClientTools(body, facade);
    const { messages, instructions, requestIndexes } = clientHistoryOf(body, facade.maxClientInstructionsChars);
    if (isAuxiliaryRequest(messages, facade.auxiliaryPrefixes)) {
      const target = {
        userId: principal.userId,
        model: body.model,
        instructions,
        content: messages[0]?.content ?? '',
        stream: body.stream === true,
        includeUsage: body.stream_options?.include_usage === true,
      };
      await answerAuxiliaryRequest({ target, deps: auxiliaryDepsOf(deps, facade), log: deps.log }, response);
      return;
    }
    const firstUser = messages.find((each) => each.role === 'user')?.content ?? '';
    const started = await startChatCompletion(
      {
        userId: principal.userId,
        conversation: conversationOf(request, facade.threadHeaders, firstUser),
        messages,
        client: { instructions, tools: clientToolsOf(body) },
      },
      chatCompletionDepsOf(deps, facade),
    ).catch((error: unknown) => {
      throw inRequestIndexes(error, requestIndexes);
    });
    response.setHeader(THREAD_ID_HEADER, started.thread.id);
    const answer = { model: body.model, turn: started.turn, threadId: started.thread.id };
    if (body.stream)
      await answerAsStream(
        deps,
        facade,
        answer,
        { includeUsage: body.stream_options?.include_usage === true },
        request,
        response,
      );
    else await answerAsJson(deps, facade, answer, request, response);
  });

  router.use(responsesRoutes(deps, facade, principalDeps));

  router.use((_request, _response, next) =>
    next(
      new AppError(
        'NOT_FOUND',
        'No such route of the OpenAI-compatible API (GET /v1/models, POST /v1/chat/completions, POST /v1/responses).',
      ),
    ),
  );
  return router;
}
