import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { chatCompletionBody } from '../openai-facade/chat-request';
import { BEARER, json } from './openapi-helpers';

const secured: Record<string, string[]>[] = [{ [BEARER]: [] }];

const openAIError = z
  .strictObject({
    error: z.strictObject({
      message: z.string(),
      type: z.string(),
      param: z.string().nullable(),
      code: z.string().nullable(),
    }),
  })
  .meta({ id: 'OpenAIError' });

const model = z
  .strictObject({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })
  .meta({ id: 'OpenAIModel' });

const usage = z
  .strictObject({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    prompt_tokens_details: z.strictObject({ cached_tokens: z.number().int() }).optional(),
  })
  .describe(
    'What the upstream model reported for the packs of this answer, summed over its calls (tool rounds, an overflow retry): not the size of the history sent.',
  );

const completion = z
  .strictObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.strictObject({
        index: z.number().int(),
        message: z.strictObject({ role: z.literal('assistant'), content: z.string(), refusal: z.null() }),
        finish_reason: z.enum(['stop', 'tool_calls']),
        logprobs: z.null(),
      }),
    ),
    usage,
  })
  .meta({ id: 'ChatCompletion' });

/** An OpenAI error response per status. */
export function openAIErrors(statuses: Record<number, string>) {
  return Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => [status, json(openAIError, description)]),
  );
}

const headers = z.object({
  'x-thread-id': z
    .string()
    .max(200)
    .optional()
    .describe(
      'The conversation: an opaque key of the client (FACADE_THREAD_HEADERS names the accepted headers; X-OpenWebUI-Chat-Id and session-id by default too). Without one, the conversation is found by its first message, best effort.',
    ),
  'x-user-id': z
    .string()
    .max(128)
    .optional()
    .describe("With a service key (OPENAI_FACADE_KEYS): the end user (or X-OpenWebUI-User-Id, or the body's `user`)."),
});

/** The OpenAI-compatible front door (/v1). */
export function documentFacadeRoutes(registry: OpenAPIRegistry): void {
  const authErrors = {
    401: "A missing or unknown bearer token (a user token, or a service key), or a token of an erased user issued before the erasure (a guest's always)",
    503: 'The server is restarting',
  };
  registry.registerPath({
    method: 'get',
    path: '/v1/models',
    tags: ['openai'],
    security: secured,
    summary: 'The models this server serves (OpenAI list shape): CHAT_MODEL and FACADE_MODEL_ALIASES',
    responses: {
      200: json(z.strictObject({ object: z.literal('list'), data: z.array(model) }), 'The models'),
      ...openAIErrors(authErrors),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/models/{model}',
    tags: ['openai'],
    security: secured,
    summary: 'One model',
    request: { params: z.object({ model: z.string() }) },
    responses: { 200: json(model, 'The model'), ...openAIErrors({ ...authErrors, 404: 'model_not_found' }) },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/chat/completions',
    tags: ['openai'],
    security: secured,
    summary:
      'OpenAI Chat Completions over the split store: send the whole history, the server keeps the transcript, summary and window',
    description:
      "The history is reconciled with the conversation's thread: messages already stored are skipped, a new trailing user message " +
      'is a turn, a history ending with an answered user message is a regeneration, and a history that changes a user message answers on a ' +
      "fork from that point (later requests follow the branch their history matches). System messages are the thread's client instructions, " +
      "placed after the server's system prefix. `stream: true` answers with `chat.completion.chunk` server-sent events, a usage chunk when " +
      '`stream_options.include_usage`, then `data: [DONE]`; a failure after the stream opened is its last event, `data: {"error": ...}`. ' +
      'The response header `X-Chat-Thread-Id` names the thread (open it in the web app). A request of one user message beginning with one ' +
      "of FACADE_AUXILIARY_PREFIXES (default Open WebUI's `### Task:`: titles, tags, follow-up suggestions) is answered statelessly: sent " +
      'to the model as it came, nothing stored, no thread (no `X-Chat-Thread-Id`), spending the send limit.',
    request: { headers, body: { content: { 'application/json': { schema: chatCompletionBody } } } },
    responses: {
      200: {
        description: 'The answer (JSON), or its stream (text/event-stream)',
        headers: {
          'X-Chat-Thread-Id': {
            description:
              'The thread of the conversation (a fork after an edit): open it in the web app or the admin console; absent on an auxiliary request',
            schema: { type: 'string', format: 'uuid' },
          },
        },
        content: { 'application/json': { schema: completion }, 'text/event-stream': { schema: z.string() } },
      },
      ...openAIErrors({
        400: 'invalid_request_error: a malformed request (`param` names the field), a history this server cannot adopt',
        ...authErrors,
        404: 'model_not_found',
        409: 'An answer of this conversation is still being written (conflict), or MAX_THREADS_PER_USER reached by a fork (quota_exceeded)',
        413: 'The body is over FACADE_MAX_BODY_BYTES, the new message over MAX_MESSAGE_CHARS, or an auxiliary request over the prompt budget',
        429: 'rate_limit_exceeded (RATE_LIMIT_PER_MINUTE) or busy (MAX_QUEUED_TURNS of the conversation), with Retry-After',
        502: 'The upstream model failed',
        504: 'The upstream model timed out',
      }),
    },
  });
}
