import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { countTokensBody, messagesBody } from '../anthropic-messages/messages-request';
import { json } from './openapi-helpers';

/** The security scheme of Anthropic's clients: the key in `x-api-key` (a bearer token is accepted too). */
export const API_KEY = 'anthropicApiKey';

const secured: Record<string, string[]>[] = [{ [API_KEY]: [] }];

const anthropicError = z
  .strictObject({
    type: z.literal('error'),
    error: z.strictObject({
      type: z
        .enum([
          'invalid_request_error',
          'authentication_error',
          'permission_error',
          'not_found_error',
          'request_too_large',
          'rate_limit_error',
          'api_error',
          'timeout_error',
          'overloaded_error',
        ])
        .describe("Anthropic's error type"),
      message: z.string(),
    }),
    request_id: z.string().nullable().describe('The X-Request-Id of the request (also its request-id header)'),
  })
  .meta({ id: 'AnthropicError' });

function anthropicErrors(statuses: Record<number, string>) {
  return Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => [status, json(anthropicError, description)]),
  );
}

const usage = z
  .strictObject({
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cache_read_input_tokens: z.number().int(),
    cache_creation_input_tokens: z.number().int(),
  })
  .describe(
    "What the upstream model reported for the packs of this answer (not the size of the history sent): cache_read_input_tokens is the upstream's cached figure, input_tokens the rest; cache_creation_input_tokens is 0 while the upstream reports no cache writes.",
  );

const message = z
  .object({
    id: z.string().describe('msg_…: the turn that answered'),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(z.object({ type: z.enum(['text', 'tool_use']) }).loose()),
    stop_reason: z.enum(['end_turn', 'max_tokens', 'tool_use']),
    stop_sequence: z.null(),
    usage,
  })
  .loose()
  .meta({ id: 'AnthropicMessage' });

const headers = z.object({
  'x-thread-id': z
    .string()
    .max(200)
    .optional()
    .describe(
      'The conversation: an opaque key of the client (FACADE_THREAD_HEADERS names the accepted headers). Without one, the conversation is found by its first message, best effort.',
    ),
  'x-user-id': z
    .string()
    .max(128)
    .optional()
    .describe("With a service key (OPENAI_FACADE_KEYS): the end user (or the body's `metadata.user_id`)."),
});

const authErrors = {
  401: 'authentication_error: a missing or unknown key (x-api-key or a bearer token: a user token, or a service key)',
  529: 'overloaded_error: the server is restarting',
};

/** Anthropic's Messages API over the split store (/v1/messages). */
export function documentMessagesRoutes(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', API_KEY, {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description:
      'A user token or a service key (OPENAI_FACADE_KEYS), as Anthropic clients send their key; `Authorization: Bearer` is accepted too.',
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/messages',
    tags: ['anthropic'],
    security: secured,
    summary: "Anthropic's Messages API over the split store: the whole history and a conversation key",
    description:
      'The whole history is reconciled with the conversation its key header names, as /v1/chat/completions does (forks on an edit, regeneration). ' +
      "`system` (a string or text blocks) is the thread's client instructions. Content blocks: text, tool_use, tool_result; thinking blocks are dropped; image and document blocks are refused (400 naming the block). " +
      'cache_control marks are accepted and ignored: the server decides the breakpoints of its own pack. Client tools (name, description, input_schema) are offered with ours; typed (Anthropic-hosted) tools are dropped and named in X-Chat-Ignored-Tools. ' +
      'A call of a client tool ends the answer with tool_use blocks and stop_reason tool_use. `max_tokens` is required: the answer the client receives is cut there (stop_reason max_tokens) and stopped (one the model finished meanwhile is given whole). ' +
      'A request of one user message beginning with one of FACADE_AUXILIARY_PREFIXES is answered statelessly (no thread, no X-Chat-Thread-Id). ' +
      'tool_choice, temperature, stop_sequences and thinking are accepted and ignored. `stream: true` answers with message_start, ping, content_block_start/delta/stop, message_delta and message_stop; a failure after the stream opened is an `error` event.',
    request: { headers, body: { content: { 'application/json': { schema: messagesBody } } } },
    responses: {
      200: {
        description: 'The message (JSON), or its events (text/event-stream)',
        headers: {
          'X-Chat-Thread-Id': {
            description: 'The thread the answer is stored in (open it in the web app)',
            schema: { type: 'string', format: 'uuid' },
          },
        },
        content: { 'application/json': { schema: message }, 'text/event-stream': { schema: z.string() } },
      },
      ...anthropicErrors({
        400: 'invalid_request_error: a field is wrong (the message names it), max_tokens missing, or a history this server cannot continue',
        ...authErrors,
        404: 'not_found_error: a model this server does not serve',
        409: 'An answer of this conversation is still being written, or MAX_THREADS_PER_USER reached by a fork',
        413: 'request_too_large: the body is over FACADE_MAX_BODY_BYTES, a new message over MAX_MESSAGE_CHARS, system over MAX_CLIENT_INSTRUCTIONS_CHARS, a tool description over MAX_CLIENT_TOOL_DESCRIPTION_CHARS',
        429: 'rate_limit_error (RATE_LIMIT_PER_MINUTE, TOOL_ROUNDS_PER_MINUTE, FORKS_PER_MINUTE), with Retry-After',
        502: 'api_error: the upstream model failed',
        504: 'timeout_error: the upstream model timed out',
      }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/messages/count_tokens',
    tags: ['anthropic'],
    security: secured,
    summary: "What the pack for these messages would cost, by this server's counter",
    description:
      "The messages as a new conversation's pack holds them: our system prefix, `system`, our tools and the client's, the messages. `model` may be left out. Spends the send limit.",
    request: {
      headers,
      body: { content: { 'application/json': { schema: countTokensBody.partial({ model: true }) } } },
    },
    responses: {
      200: json(z.strictObject({ input_tokens: z.number().int() }), 'The count'),
      ...anthropicErrors({
        400: 'invalid_request_error',
        ...authErrors,
        404: 'not_found_error: a model this server does not serve',
        413: "request_too_large: the input is longer than the model's context window could hold",
        429: 'rate_limit_error (RATE_LIMIT_PER_MINUTE), with Retry-After',
      }),
    },
  });
}
