import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { responseBody } from '../openai-responses/responses-request';
import { openAIErrors } from './document-facade-routes';
import { BEARER, json } from './openapi-helpers';

const secured: Record<string, string[]>[] = [{ [BEARER]: [] }];

const outputItem = z
  .object({
    type: z.enum(['message', 'function_call']),
    id: z.string().describe('msg_… for the answer, fc_… for a call of a client tool'),
    status: z.string(),
  })
  .loose();

const usage = z
  .strictObject({
    input_tokens: z.number().int(),
    input_tokens_details: z.strictObject({ cached_tokens: z.number().int() }),
    output_tokens: z.number().int(),
    output_tokens_details: z.strictObject({ reasoning_tokens: z.number().int() }),
    total_tokens: z.number().int(),
  })
  .describe(
    "What the upstream model reported for the packs of this answer (not the size of the input sent); cached_tokens: the upstream's report.",
  );

const responseObject = z
  .object({
    id: z.string().describe('resp_…: the turn that answered, signed for its user'),
    object: z.literal('response'),
    created_at: z.number().int(),
    status: z.enum(['queued', 'in_progress', 'completed', 'failed', 'cancelled']),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    model: z.string(),
    output: z.array(outputItem),
    previous_response_id: z.string().nullable(),
    conversation: z.object({ id: z.string() }).nullable(),
    usage: usage.nullable(),
  })
  .loose()
  .meta({ id: 'OpenAIResponse' });

const headers = z.object({
  'session-id': z
    .string()
    .max(200)
    .optional()
    .describe(
      'Stateless mode: the conversation key (any of FACADE_THREAD_HEADERS: X-Thread-Id, X-OpenWebUI-Chat-Id, session-id by default). `prompt_cache_key` is never one.',
    ),
  'x-user-id': z
    .string()
    .max(128)
    .optional()
    .describe("With a service key (OPENAI_FACADE_KEYS): the end user (or X-OpenWebUI-User-Id, or the body's `user`)."),
});

const idParameter = z.object({ id: z.string().describe('A resp_ id this server gave the caller') });

const authErrors = {
  401: 'A missing or unknown bearer token (a user token, or a service key)',
  503: 'The server is restarting',
};

/** The Responses API over the split store (/v1/responses). */
// eslint-disable-next-line max-lines-per-function -- declarative data: the OpenAPI description of the Responses routes
export function documentResponsesRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/responses',
    tags: ['openai'],
    security: secured,
    summary:
      'OpenAI Responses over the split store: stateless (whole input and a key), previous_response_id or conversation',
    description:
      'Without previous_response_id or conversation the whole input is reconciled with the conversation its key header names, as ' +
      "/v1/chat/completions does. previous_response_id goes on from that answer (on a fork through it when the thread went on); an unknown, deleted or another user's id is 400 previous_response_not_found. " +
      'conversation (conv_…, an id or {id}) appends to that thread (unknown or foreign: 404); both together: 400. User items in a row are one turn; ' +
      "system and developer items are the thread's client instructions; `instructions` hold for this response only; reasoning items are dropped; " +
      'input_image and input_file parts are refused (400 naming the part). function tools are passed through, namespace tools offered as <namespace>__<name>, ' +
      'hosted tools (web_search, file_search, …) dropped and named in X-Chat-Ignored-Tools. A request only bringing function_call_output items spends TOOL_ROUNDS_PER_MINUTE, ' +
      'not the send limit. `stream: true` answers with the Responses event sequence, each event with its sequence_number; a failure after the stream opened is an `error` event, then `response.failed`. ' +
      'The transcript is kept whatever `store` says; a response made with `store: false` cannot be fetched or continued later. ' +
      'A `compaction` item (from POST /v1/responses/compact) stands for its conversation through the point it was made: the items after it go on from there (a tampered, foreign or deleted one is 400 param input). ' +
      'A last `compaction_trigger` item compacts the conversation now and is answered with exactly one compaction item and no model answer. ' +
      '`context_management: [{type: "compaction", compact_threshold}]` sets the conversation’s fold trigger to tokens=<compact_threshold>; the answer then carries a compaction item when a fold landed since the request began. ' +
      '`background: true` (with `store`) runs the answer detached from the request: the Response at once, `queued` (streamed: its events, text deltas of 64 characters, resumable with GET ?stream=true&starting_after); refused with 429 busy while the user has BACKGROUND_RESPONSES_PER_USER answers in flight.',
    request: { headers, body: { content: { 'application/json': { schema: responseBody } } } },
    responses: {
      200: {
        description: 'The Response (JSON), or its events (text/event-stream)',
        headers: {
          'X-Chat-Thread-Id': {
            description: 'The thread the answer is stored in (open it in the web app)',
            schema: { type: 'string', format: 'uuid' },
          },
          'X-Chat-Ignored-Tools': {
            description: 'The hosted tool types the request offered that this server does not run (comma-separated)',
            schema: { type: 'string' },
          },
        },
        content: { 'application/json': { schema: responseObject }, 'text/event-stream': { schema: z.string() } },
      },
      ...openAIErrors({
        400: 'invalid_request_error (`param` names the field), or previous_response_not_found',
        ...authErrors,
        404: 'model_not_found, or an unknown conversation',
        409: 'An answer of this conversation is still being written, or MAX_THREADS_PER_USER reached by a fork',
        413: 'The body is over FACADE_MAX_BODY_BYTES, a new message over MAX_MESSAGE_CHARS, instructions over MAX_CLIENT_INSTRUCTIONS_CHARS',
        429: 'rate_limit_exceeded (RATE_LIMIT_PER_MINUTE, TOOL_ROUNDS_PER_MINUTE, FORKS_PER_MINUTE) or busy, with Retry-After',
        502: 'The upstream model failed',
        504: 'The upstream model timed out',
      }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/responses/input_tokens',
    tags: ['openai'],
    security: secured,
    summary: "What the pack for an input would cost, by this server's counter",
    description:
      "Going on from a thread (previous_response_id, conversation): its pack as the next call builds it (summary, window, the tools offered) plus the new input. Otherwise the input as a new conversation's pack holds it. `model` may be left out. Spends the send limit.",
    request: { headers, body: { content: { 'application/json': { schema: responseBody.partial({ model: true }) } } } },
    responses: {
      200: json(
        z.strictObject({ object: z.literal('response.input_tokens'), input_tokens: z.number().int() }),
        'The count',
      ),
      ...openAIErrors({
        400: 'invalid_request_error, or previous_response_not_found',
        ...authErrors,
        404: 'model_not_found, or an unknown conversation',
        413: "The input is longer than the model's context window could hold",
        429: 'rate_limit_exceeded (RATE_LIMIT_PER_MINUTE), with Retry-After',
      }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/responses/compact',
    tags: ['openai'],
    security: secured,
    summary: 'Compacts a conversation now: its summary folded, answered with one compaction item',
    description:
      'The conversation is named as POST /v1/responses names it (previous_response_id, conversation, a compaction item in `input`, or the whole input with its key header). ' +
      'A fold runs now through the normal fold path (bounded by TURN_TIMEOUT_MS; whatever falls outside the keep policy goes into the summary), then the answer lists the user messages of the input (with previous_response_id: those of the thread’s last 40 messages) and one `compaction` item. ' +
      'Its encrypted_content is a token signed for the caller (a key derived from AUTH_SECRET) naming the thread, its summary revision and the point it was made at; sent back in a later input it stands for the conversation through that point. ' +
      '`instructions` are accepted and not used (the thread’s summary prompt writes the summary). Spends the send limit and, with spend limits on, a send’s hold.',
    request: {
      headers,
      body: {
        content: {
          'application/json': { schema: responseBody.partial({ input: true }) },
        },
      },
    },
    responses: {
      200: json(
        z.object({
          id: z.string(),
          object: z.literal('response.compaction'),
          created_at: z.number().int(),
          output: z.array(z.object({ type: z.string() }).loose()),
          usage: z.object({}).loose(),
        }),
        'The compacted conversation',
      ),
      ...openAIErrors({
        400: 'invalid_request_error (`param` input: a history this server does not hold, or a compaction item not the caller’s), or previous_response_not_found',
        ...authErrors,
        404: 'model_not_found, or an unknown conversation',
        429: 'rate_limit_exceeded (RATE_LIMIT_PER_MINUTE) with Retry-After, or insufficient_quota (a spend limit)',
        502: 'The summarizer failed',
        504: 'The fold did not finish within TURN_TIMEOUT_MS',
      }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/responses/{id}',
    tags: ['openai'],
    security: secured,
    summary:
      "A stored response (its answer as the transcript holds it; the request's model, tools and metadata are not kept)",
    description:
      '`stream=true`: its events (as a background stream numbers them: text deltas of 64 characters) after `starting_after`; an answer still being written is sent once it has ended. From any process.',
    request: {
      params: idParameter,
      query: z.object({
        stream: z.enum(['true', 'false']).optional(),
        starting_after: z.number().int().min(-1).optional(),
        include: z.array(z.string().max(200)).max(20).optional(),
      }),
    },
    responses: {
      200: {
        description: 'The Response (JSON), or its events (text/event-stream)',
        content: { 'application/json': { schema: responseObject }, 'text/event-stream': { schema: z.string() } },
      },
      ...openAIErrors({ ...authErrors, 400: 'A malformed query', 404: "Unknown, deleted or another user's" }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/responses/{id}/cancel',
    tags: ['openai'],
    security: secured,
    summary: "Stops a response's answer as the web app's stop does (the text so far is kept, marked stopped)",
    description:
      'Queued, the answer ends without calling the model; running, it is stopped in whichever process runs it. Waits up to 5 s for the end, then answers the Response as it stands (`cancelled` once stopped); an answer that has ended is left as it is.',
    request: { params: idParameter },
    responses: {
      200: json(responseObject, 'The Response'),
      ...openAIErrors({ ...authErrors, 404: "Unknown, deleted or another user's" }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/v1/responses/{id}',
    tags: ['openai'],
    security: secured,
    summary:
      'Deletes a response: its answer is forgotten in the transcript (tombstones, as forget does); the question stays',
    request: { params: idParameter },
    responses: {
      200: json(z.strictObject({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) }), 'Deleted'),
      ...openAIErrors({
        ...authErrors,
        404: "Unknown, deleted or another user's",
        409: 'The answer is still being written',
        429: 'rate_limit_exceeded: the summary covered the answer and is rebuilt (RATE_LIMIT_PER_MINUTE)',
      }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/responses/{id}/input_items',
    tags: ['openai'],
    security: secured,
    summary: 'The input a response answered (its user message), in cursor pages',
    request: {
      params: idParameter,
      query: z.object({
        after: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(100).optional(),
        order: z.enum(['asc', 'desc']).optional(),
      }),
    },
    responses: {
      200: json(
        z.strictObject({
          object: z.literal('list'),
          data: z.array(z.object({ type: z.string(), id: z.string() }).loose()),
          first_id: z.string().nullable(),
          last_id: z.string().nullable(),
          has_more: z.boolean(),
        }),
        'One page of items',
      ),
      ...openAIErrors({ ...authErrors, 400: 'A malformed query', 404: "Unknown, deleted or another user's" }),
    },
  });

  documentConversationRoutes(registry);
}

const conversation = z
  .strictObject({
    id: z.string().describe('conv_…: the thread id without dashes'),
    object: z.literal('conversation'),
    created_at: z.number().int(),
    metadata: z.record(z.string(), z.string()),
  })
  .meta({ id: 'OpenAIConversation' });

const conversationParameter = z.object({ id: z.string().describe("A conv_ id of one of the caller's threads") });

/** The Conversations API's conversation routes. */
// eslint-disable-next-line max-lines-per-function -- declarative data: the OpenAPI description of the Conversations routes
function documentConversationRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/conversations',
    tags: ['openai'],
    security: secured,
    summary: 'Opens a conversation: a thread, its system and developer items the client instructions',
    description:
      'Its other starting items (user and assistant messages, function calls and their outputs) are appended as POST /v1/conversations/{id}/items does, without a turn; `metadata` (≤ 16 pairs) is kept with the thread and returned. Spends the send limit once.',
    request: {
      headers,
      body: {
        content: {
          'application/json': {
            schema: z.object({
              items: z
                .array(z.object({ type: z.string().optional(), role: z.string() }).loose())
                .max(20)
                .optional(),
              metadata: z.record(z.string().max(64), z.string().max(512)).optional(),
            }),
          },
        },
      },
    },
    responses: {
      200: json(conversation, 'The conversation'),
      ...openAIErrors({
        400: 'invalid_request_error (`param` names the field)',
        ...authErrors,
        409: 'MAX_THREADS_PER_USER reached (quota_exceeded)',
        413: 'The instructions are over MAX_CLIENT_INSTRUCTIONS_CHARS, or an item over MAX_MESSAGE_CHARS',
        429: 'rate_limit_exceeded (RATE_LIMIT_PER_MINUTE), with Retry-After',
      }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/conversations/{id}',
    tags: ['openai'],
    security: secured,
    summary: "A conversation (one of the caller's threads)",
    request: { params: conversationParameter },
    responses: {
      200: json(conversation, 'The conversation'),
      ...openAIErrors({ ...authErrors, 404: "Unknown or another user's" }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/conversations/{id}',
    tags: ['openai'],
    security: secured,
    summary: "Replaces a conversation's metadata (≤ 16 pairs, kept with its thread; the model never sees it)",
    request: {
      params: conversationParameter,
      body: {
        content: {
          'application/json': {
            schema: z.object({ metadata: z.record(z.string().max(64), z.string().max(512)) }),
          },
        },
      },
    },
    responses: {
      200: json(conversation, 'The conversation'),
      ...openAIErrors({
        400: 'invalid_request_error (`param` names the field)',
        ...authErrors,
        404: "Unknown or another user's",
        429: 'rate_limit_exceeded (RATE_LIMIT_PER_MINUTE), with Retry-After',
      }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/v1/conversations/{id}',
    tags: ['openai'],
    security: secured,
    summary: 'Deletes a conversation: its thread, as DELETE /api/threads/{id} does',
    request: { params: conversationParameter },
    responses: {
      200: json(
        z.strictObject({ id: z.string(), object: z.literal('conversation.deleted'), deleted: z.literal(true) }),
        'Deleted',
      ),
      ...openAIErrors({ ...authErrors, 404: "Unknown or another user's" }),
    },
  });
  documentConversationItemRoutes(registry);
}

const conversationItem = z
  .object({
    type: z.enum(['message', 'function_call', 'function_call_output']),
    id: z.string().describe('msg_… or fc_…: the transcript message id without dashes (a call: and its index)'),
    status: z.enum(['completed', 'incomplete']),
  })
  .loose()
  .meta({ id: 'OpenAIConversationItem' });

const itemParameters = conversationParameter.extend({
  itemId: z.string().describe('An item id of that conversation (msg_… or fc_…)'),
});

/** The Conversations API's items routes: the thread's transcript as Responses items. */
// eslint-disable-next-line max-lines-per-function -- declarative data: the OpenAPI description of the conversation item routes
function documentConversationItemRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/conversations/{id}/items',
    tags: ['openai'],
    security: secured,
    summary: "Adds items to a conversation's thread without running a turn",
    description:
      'User messages are stored as plain user messages (no answer is made), assistant messages as complete answers, `function_call` items as the tool calls of the answer before them and `function_call_output` items as tool results; user items in a row join one message, as on POST /v1/responses. System and developer items are refused (they are set when the conversation opens). All items are written in one transaction, or none. Spends the send limit.',
    request: {
      params: conversationParameter,
      body: {
        content: {
          'application/json': {
            schema: z.object({
              items: z
                .array(z.object({ type: z.string().optional(), role: z.string().optional() }).loose())
                .min(1)
                .max(20),
            }),
          },
        },
      },
    },
    responses: {
      200: json(
        z.strictObject({
          object: z.literal('list'),
          data: z.array(conversationItem),
          first_id: z.string().nullable(),
          last_id: z.string().nullable(),
          has_more: z.literal(false),
        }),
        'The items added, as the conversation lists them',
      ),
      ...openAIErrors({
        400: 'invalid_request_error (`param` names the item)',
        ...authErrors,
        404: "Unknown or another user's",
        409: 'An answer in the conversation is being written',
        413: 'An item over MAX_MESSAGE_CHARS',
        429: 'rate_limit_exceeded (RATE_LIMIT_PER_MINUTE), with Retry-After',
      }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/conversations/{id}/items',
    tags: ['openai'],
    security: secured,
    summary: "A conversation's items (its thread's transcript as Responses items), in cursor pages",
    description:
      'User messages are `message` items with `input_text`, answers `message` items with `output_text` then one `function_call` per tool call, tool results `function_call_output` items; forgotten and superseded messages are left out. `include` is accepted and ignored.',
    request: {
      params: conversationParameter,
      query: z.object({
        after: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(100).optional(),
        order: z.enum(['asc', 'desc']).optional(),
        include: z.array(z.string().max(200)).max(20).optional(),
      }),
    },
    responses: {
      200: json(
        z.strictObject({
          object: z.literal('list'),
          data: z.array(conversationItem),
          first_id: z.string().nullable(),
          last_id: z.string().nullable(),
          has_more: z.boolean(),
        }),
        'One page of items',
      ),
      ...openAIErrors({
        ...authErrors,
        400: 'A malformed query, or `after` naming no item of this conversation',
        404: "Unknown or another user's",
      }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/conversations/{id}/items/{itemId}',
    tags: ['openai'],
    security: secured,
    summary: 'One item of a conversation',
    request: { params: itemParameters },
    responses: {
      200: json(conversationItem, 'The item'),
      ...openAIErrors({ ...authErrors, 404: "Unknown, forgotten or another user's" }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/v1/conversations/{id}/items/{itemId}',
    tags: ['openai'],
    security: secured,
    summary: 'Deletes an item: its message is forgotten (a tombstone, as forget does); answers the conversation',
    request: { params: itemParameters },
    responses: {
      200: json(conversation, 'The conversation'),
      ...openAIErrors({
        ...authErrors,
        404: "Unknown, forgotten or another user's",
        409: 'The message is still being written',
        429: 'rate_limit_exceeded: the summary covered the message and is rebuilt (RATE_LIMIT_PER_MINUTE)',
      }),
    },
  });
}
