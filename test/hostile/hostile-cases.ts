import { randomUUID } from 'node:crypto';
import type { MessageDto, ThreadDto } from '../../src/shared/api';
import type { Tab } from '../support/socket-client';
import type { TestApp } from '../support/test-app';

/** What a hostile case works with: the app, a signed-in user with a thread and a socket tab, the admin token. */
export interface HostileContext {
  /** The server, in this process (`npm test`) or another (the reliability suite). */
  app: Pick<TestApp, 'api'>;
  token: string;
  thread: ThreadDto;
  tab: Tab;
  adminToken: string;
  /** User messages the server said it accepted (each must be in Postgres once). */
  accepted?: number;
}

export interface HostileAnswer {
  status: number;
  body: unknown;
}

/**
 * One entry point that takes client text or JSON, and how to send it the largest text it accepts (`largestText`
 * characters: larger is refused by its size bound before any work) and, where it parses a JSON body, a raw body of
 * `largestJsonBytes` (its parser's limit). `entry` is its row in docs/security.md.
 */
export interface HostileCase {
  entry: string;
  largestText: number;
  send(context: HostileContext, input: { text: string }): Promise<HostileAnswer>;
  largestJsonBytes?: number;
  sendJson?(context: HostileContext, body: string): Promise<HostileAnswer>;
}

const MESSAGE_CHARS = 32_000;
/** The /api JSON parser's limit for MAX_MESSAGE_CHARS = 32,000 (create-http-app.ts: 6 bytes a character + 16 KB). */
const API_JSON_BYTES = MESSAGE_CHARS * 6 + 16_384;

async function answerOf(response: Response): Promise<HostileAnswer> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: kept as text, for the failure message.
  }
  return { status: response.status, body };
}

function call(
  context: HostileContext,
  method: string,
  path: string,
  options: { json?: unknown; body?: string; token?: string | null } = {},
): Promise<HostileAnswer> {
  const token = options.token === null ? undefined : (options.token ?? context.token);
  const init: Parameters<TestApp['api']>[1] = { method, ...(token ? { token } : {}) };
  if (options.json !== undefined) init.json = options.json;
  if (options.body !== undefined) {
    init.body = options.body;
    init.headers = { 'Content-Type': 'application/json' };
  }
  return context.app.api(path, init).then(answerOf);
}

async function newThread(context: HostileContext): Promise<ThreadDto> {
  const answer = await call(context, 'POST', '/api/threads', { json: {} });
  if (answer.status !== 201) throw new Error(`thread not created: ${answer.status}`);
  return answer.body as ThreadDto;
}

/** A thread holding one short user message (and its answer, once the turn ends), for routes that name a message. */
async function threadWithMessage(context: HostileContext): Promise<{ thread: ThreadDto; message: MessageDto }> {
  const thread = await newThread(context);
  const sent = await call(context, 'POST', `/api/threads/${thread.id}/messages`, { json: { content: 'Hello there' } });
  if (sent.status !== 201) throw new Error(`message not sent: ${sent.status}`);
  context.accepted = (context.accepted ?? 0) + 1;
  return { thread, message: (sent.body as { userMessage: MessageDto }).userMessage };
}

async function socketAnswer(context: HostileContext, event: string, payload: unknown): Promise<HostileAnswer> {
  const { response } = await context.tab.request(event, payload);
  if (response.ok) return { status: 200, body: response };
  const status = { VALIDATION: 400, TOO_LARGE: 413, NOT_FOUND: 404, BUSY: 409, RATE_LIMITED: 429 }[
    response.error.code as string
  ];
  return { status: status ?? 499, body: response };
}

/**
 * Percent-encodes any text for a query string, lone surrogates included (as the three bytes a careless client
 * sends for one: encodeURIComponent refuses them, an attacker's client does not).
 */
function percentEncodeAnything(text: string): string {
  let encoded = '';
  for (const character of text) {
    const code = character.charCodeAt(0);
    if (character.length === 1 && code >= 0xd800 && code <= 0xdfff) {
      const bytes = [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
      encoded += bytes.map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
    } else {
      encoded += encodeURIComponent(character);
    }
  }
  return encoded;
}

function counted(context: HostileContext, answer: HostileAnswer): HostileAnswer {
  if (answer.status === 201 || (answer.status === 200 && (answer.body as { ok?: boolean }).ok)) {
    if (!(answer.body as { duplicate?: boolean }).duplicate) context.accepted = (context.accepted ?? 0) + 1;
  }
  return answer;
}

/** Every entry point that takes client text or JSON. docs/security.md's table names the same entries. */
export const HOSTILE_CASES: HostileCase[] = [
  {
    entry: 'POST /api/threads',
    largestText: 200,
    send: (context, { text }) => call(context, 'POST', '/api/threads', { json: { title: text } }),
    largestJsonBytes: API_JSON_BYTES,
    sendJson: (context, body) => call(context, 'POST', '/api/threads', { body }),
  },
  {
    entry: 'PATCH /api/threads/{id}',
    largestText: 200,
    send: (context, { text }) => call(context, 'PATCH', `/api/threads/${context.thread.id}`, { json: { title: text } }),
  },
  {
    entry: 'POST /api/threads/{id}/messages',
    largestText: MESSAGE_CHARS,
    async send(context, { text }) {
      const thread = await newThread(context);
      const path = `/api/threads/${thread.id}/messages`;
      return counted(
        context,
        await call(context, 'POST', path, { json: { content: text, clientMessageId: randomUUID() } }),
      );
    },
    largestJsonBytes: API_JSON_BYTES,
    sendJson: (context, body) => call(context, 'POST', `/api/threads/${context.thread.id}/messages`, { body }),
  },
  {
    entry: 'POST /api/threads/{id}/messages/{messageId}/edit',
    largestText: MESSAGE_CHARS,
    async send(context, { text }) {
      const { thread, message } = await threadWithMessage(context);
      const path = `/api/threads/${thread.id}/messages/${message.id}/edit`;
      return counted(context, await call(context, 'POST', path, { json: { content: text } }));
    },
  },
  {
    entry: 'PATCH /api/threads/{id}/settings',
    largestText: 8000,
    send: (context, { text }) =>
      call(context, 'PATCH', `/api/threads/${context.thread.id}/settings`, { json: { summaryPrompt: text } }),
  },
  {
    entry: 'GET /api/search',
    largestText: 500,
    send: (context, { text }) => call(context, 'GET', `/api/search?q=${percentEncodeAnything(text)}`),
  },
  {
    entry: 'GET /api/threads/{id}/search',
    largestText: 500,
    send: (context, { text }) =>
      call(context, 'GET', `/api/threads/${context.thread.id}/search?q=${percentEncodeAnything(text)}`),
  },
  {
    entry: 'POST /api/memory',
    largestText: 1000,
    send: (context, { text }) => call(context, 'POST', '/api/memory', { json: { text } }),
    largestJsonBytes: API_JSON_BYTES,
    sendJson: (context, body) => call(context, 'POST', '/api/memory', { body }),
  },
  {
    entry: 'PATCH /api/memory/{id}',
    largestText: 1000,
    async send(context, { text }) {
      const created = await call(context, 'POST', '/api/memory', { json: { text: 'I like tea' } });
      const id =
        (created.body as { id?: string; memory?: { id: string } }).memory?.id ?? (created.body as { id: string }).id;
      return call(context, 'PATCH', `/api/memory/${id}`, { json: { text } });
    },
  },
  {
    entry: 'PUT /api/admin/threads/{id}/summary',
    largestText: 100_000,
    send: (context, { text }) =>
      call(context, 'PUT', `/api/admin/threads/${context.thread.id}/summary`, {
        json: { text },
        token: context.adminToken,
      }),
  },
  {
    entry: 'PATCH /api/admin/threads/{id}/settings',
    largestText: 8000,
    send: (context, { text }) =>
      call(context, 'PATCH', `/api/admin/threads/${context.thread.id}/settings`, {
        json: { summaryPrompt: text },
        token: context.adminToken,
      }),
  },
  {
    entry: 'POST /api/tool-runs/{id}/progress',
    largestText: MESSAGE_CHARS,
    send: (context, { text }) =>
      call(context, 'POST', `/api/tool-runs/${randomUUID()}/progress`, {
        json: { progress: 0.5, note: text },
        token: null,
      }),
  },
  {
    entry: 'PUT /api/admin/spend-limits/users/{userId}',
    largestText: 64,
    send: (context, { text }) =>
      call(context, 'PUT', '/api/admin/spend-limits/users/hostile-user', {
        json: { limit: text },
        token: context.adminToken,
      }),
    largestJsonBytes: API_JSON_BYTES,
    sendJson: (context, body) =>
      call(context, 'PUT', '/api/admin/spend-limits/users/hostile-user', { body, token: context.adminToken }),
  },
  {
    // An id of no configured key: the body is read and validated before the id is looked up.
    entry: 'PUT /api/admin/spend-limits/service-keys/{keyId}',
    largestText: 64,
    send: (context, { text }) =>
      call(context, 'PUT', '/api/admin/spend-limits/service-keys/0123456789abcdef', {
        json: { limit: text },
        token: context.adminToken,
      }),
    largestJsonBytes: API_JSON_BYTES,
    sendJson: (context, body) =>
      call(context, 'PUT', '/api/admin/spend-limits/service-keys/0123456789abcdef', {
        body,
        token: context.adminToken,
      }),
  },
  {
    entry: 'PUT /api/admin/spend-limits/groups/{name}',
    // A member id (the longest text the body takes).
    largestText: 200,
    send: (context, { text }) =>
      call(context, 'PUT', '/api/admin/spend-limits/groups/hostile', {
        json: { limit: '1000tokens/day', members: [text, text.slice(1)] },
        token: context.adminToken,
      }),
    largestJsonBytes: API_JSON_BYTES,
    sendJson: (context, body) =>
      call(context, 'PUT', '/api/admin/spend-limits/groups/hostile', { body, token: context.adminToken }),
  },
  {
    entry: 'POST /api/admin/session',
    largestText: 4096,
    send: (context, { text }) => call(context, 'POST', '/api/admin/session', { json: { token: text }, token: null }),
    largestJsonBytes: API_JSON_BYTES,
    sendJson: (context, body) => call(context, 'POST', '/api/admin/session', { body, token: null }),
  },
  {
    entry: 'POST /api/tool-runs/{id}/result',
    largestText: MESSAGE_CHARS,
    send: (context, { text }) =>
      call(context, 'POST', `/api/tool-runs/${randomUUID()}/result`, { json: { result: text }, token: null }),
  },
  {
    entry: 'POST /v1/chat/completions',
    largestText: MESSAGE_CHARS,
    send: (context, { text }) =>
      call(context, 'POST', '/v1/chat/completions', {
        json: {
          model: 'split-context',
          messages: [
            { role: 'system', content: text },
            { role: 'user', content: text },
          ],
          tools: [{ type: 'function', function: { name: 'lookup', description: text.slice(0, 4000) } }],
        },
      }),
    largestJsonBytes: 1_000_000,
    sendJson: (context, body) => call(context, 'POST', '/v1/chat/completions', { body }),
  },
  {
    entry: 'POST /v1/responses',
    largestText: MESSAGE_CHARS,
    send: (context, { text }) =>
      call(context, 'POST', '/v1/responses', {
        json: {
          // Not a model the server serves: the whole input is read (items, parts, tools), then refused before a turn.
          model: 'split-context',
          instructions: text,
          input: [
            { role: 'developer', content: text },
            { role: 'user', content: [{ type: 'input_text', text }] },
            { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: text },
            { type: 'function_call_output', call_id: 'call_1', output: text },
            { role: 'user', content: text },
          ],
          tools: [
            { type: 'function', name: 'lookup', description: text.slice(0, 4000) },
            {
              type: 'namespace',
              name: 'ns',
              description: text.slice(0, 4000),
              tools: [{ type: 'function', name: 'x' }],
            },
            { type: 'web_search' },
          ],
        },
      }),
    largestJsonBytes: 1_000_000,
    sendJson: (context, body) => call(context, 'POST', '/v1/responses', { body }),
  },
  {
    entry: 'POST /v1/conversations',
    largestText: MESSAGE_CHARS,
    send: (context, { text }) =>
      call(context, 'POST', '/v1/conversations', {
        json: {
          items: [
            { type: 'message', role: 'developer', content: text },
            { type: 'message', role: 'system', content: [{ type: 'input_text', text }] },
          ],
        },
      }),
    largestJsonBytes: 1_000_000,
    sendJson: (context, body) => call(context, 'POST', '/v1/conversations', { body }),
  },
  {
    entry: 'POST /v1/responses/compact',
    largestText: MESSAGE_CHARS,
    send: (context, { text }) =>
      call(context, 'POST', '/v1/responses/compact', {
        json: {
          // Not a model the server serves: the whole input is read (items, a compaction item), then refused.
          model: 'split-context',
          instructions: text,
          input: [
            { role: 'developer', content: text },
            { role: 'user', content: [{ type: 'input_text', text }] },
            { type: 'compaction', encrypted_content: text.slice(0, 100_000) },
            { role: 'assistant', content: text },
            { type: 'compaction_trigger' },
          ],
        },
      }),
    largestJsonBytes: 1_000_000,
    sendJson: (context, body) => call(context, 'POST', '/v1/responses/compact', { body }),
  },
  {
    entry: 'POST /v1/conversations/{id}',
    // Metadata values are at most 512 characters (keys 64): 16 pairs of them, the text cut to fit.
    largestText: 512,
    async send(context, { text }) {
      const thread = await newThread(context);
      const metadata = Object.fromEntries(
        Array.from({ length: 16 }, (_value, index) => [`${index}${text}`.slice(0, 64), text.slice(0, 512)]),
      );
      return call(context, 'POST', `/v1/conversations/conv_${thread.id.replace(/-/g, '')}`, { json: { metadata } });
    },
    largestJsonBytes: 1_000_000,
    sendJson: async (context, body) => {
      const thread = await newThread(context);
      return call(context, 'POST', `/v1/conversations/conv_${thread.id.replace(/-/g, '')}`, { body });
    },
  },
  {
    entry: 'POST /v1/conversations/{id}/items',
    largestText: MESSAGE_CHARS,
    async send(context, { text }) {
      const thread = await newThread(context);
      const answer = await call(context, 'POST', `/v1/conversations/conv_${thread.id.replace(/-/g, '')}/items`, {
        json: {
          items: [
            { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
            { type: 'message', role: 'assistant', content: text },
            { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: JSON.stringify({ q: text }) },
            { type: 'function_call_output', call_id: 'call_1', output: text },
          ],
        },
      });
      // One user message stored per accepted request.
      if (answer.status === 200) context.accepted = (context.accepted ?? 0) + 1;
      return answer;
    },
    largestJsonBytes: 1_000_000,
    sendJson: async (context, body) => {
      const thread = await newThread(context);
      return call(context, 'POST', `/v1/conversations/conv_${thread.id.replace(/-/g, '')}/items`, { body });
    },
  },
  {
    entry: 'POST /v1/responses/input_tokens',
    largestText: MESSAGE_CHARS,
    send: (context, { text }) =>
      call(context, 'POST', '/v1/responses/input_tokens', {
        json: {
          instructions: text,
          input: [
            { role: 'developer', content: text },
            { role: 'user', content: [{ type: 'input_text', text }] },
            { role: 'assistant', content: text },
            { role: 'user', content: text },
          ],
          tools: [{ type: 'function', name: 'lookup', description: text.slice(0, 4000) }],
        },
      }),
    largestJsonBytes: 1_000_000,
    sendJson: (context, body) => call(context, 'POST', '/v1/responses/input_tokens', { body }),
  },
  {
    entry: 'POST /v1/messages',
    largestText: MESSAGE_CHARS,
    send: (context, { text }) =>
      call(context, 'POST', '/v1/messages', {
        json: {
          // Not a model the server serves: the whole history is read (blocks, tools), then refused before a turn.
          model: 'split-context',
          max_tokens: 1024,
          system: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }],
          messages: [
            { role: 'user', content: [{ type: 'text', text }] },
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: text, signature: text },
                { type: 'text', text },
                { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { query: text } },
              ],
            },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text }] },
                { type: 'text', text },
              ],
            },
          ],
          tools: [{ name: 'lookup', description: text.slice(0, 4000), input_schema: { type: 'object' } }],
        },
      }),
    largestJsonBytes: 1_000_000,
    sendJson: (context, body) => call(context, 'POST', '/v1/messages', { body }),
  },
  {
    entry: 'POST /v1/messages/count_tokens',
    largestText: MESSAGE_CHARS,
    send: (context, { text }) =>
      call(context, 'POST', '/v1/messages/count_tokens', {
        json: {
          system: text,
          messages: [
            { role: 'user', content: text },
            { role: 'assistant', content: [{ type: 'text', text }] },
            { role: 'user', content: [{ type: 'text', text }] },
          ],
          tools: [{ name: 'lookup', description: text.slice(0, 4000), input_schema: { type: 'object' } }],
        },
      }),
    largestJsonBytes: 1_000_000,
    sendJson: (context, body) => call(context, 'POST', '/v1/messages/count_tokens', { body }),
  },
  {
    entry: 'socket message-send',
    largestText: MESSAGE_CHARS,
    async send(context, { text }) {
      const thread = await newThread(context);
      await context.tab.request('thread-join', { threadId: thread.id });
      const answer = await socketAnswer(context, 'message-send', {
        threadId: thread.id,
        content: text,
        clientMessageId: randomUUID(),
      });
      return counted(context, answer);
    },
  },
  {
    entry: 'socket message-edit',
    largestText: MESSAGE_CHARS,
    async send(context, { text }) {
      const { thread, message } = await threadWithMessage(context);
      const answer = await socketAnswer(context, 'message-edit', {
        threadId: thread.id,
        messageId: message.id,
        content: text,
        clientMessageId: randomUUID(),
      });
      return counted(context, answer);
    },
  },
  {
    entry: 'socket thread-join',
    largestText: 100,
    send: (context, { text }) => socketAnswer(context, 'thread-join', { threadId: text }),
  },
  {
    entry: 'socket tool-cancel',
    largestText: 100,
    send: (context, { text }) => socketAnswer(context, 'tool-cancel', { runId: text }),
  },
];
