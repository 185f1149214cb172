/**
 * A Messages API stub: `POST /v1/messages`, streamed (message_start, content_block_start/delta/stop, message_delta,
 * message_stop) and not, with scriptable replies (text, tool_use, thinking, errors such as 529 `overloaded_error` and
 * 400 "prompt is too long"), every request recorded, and Anthropic's prompt cache emulated (anthropic-cache-emulator.ts)
 * in the usage it reports. It checks the request rules that bite (max_tokens, the user first and alternation, every
 * tool_use answered in the next user message, at most 4 breakpoints) and answers 400 like the API when one is broken.
 * The SDK's base URL is the stub's root (`url`): it appends `/v1/messages`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ANTHROPIC_MAX_BREAKPOINTS,
  AnthropicCacheEmulator,
  approximateTokens,
  flattenRequest,
  type CacheTotals,
  type CacheUsage,
  type MessagesRequestBody,
} from './anthropic-cache-emulator';

export type { CacheTotals, MessagesRequestBody };

/** The usage to report instead of the emulated one (a contract scripting what the provider says). */
export interface AnthropicScriptedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export interface AnthropicTextReply {
  type: 'text';
  text: string;
  /** The text's deltas as streamed (they must join to `text`). Default: 16-character pieces. */
  chunks?: string[];
  /** A thinking block before the text (with its signature). */
  thinking?: { thinking: string; signature: string };
  /** Wait between streamed deltas. */
  chunkDelayMs?: number;
  usage?: AnthropicScriptedUsage;
}

export interface AnthropicToolUseReply {
  type: 'tool_use';
  /** `input` as a string is streamed as is (e.g. arguments that are not JSON). */
  calls: { id?: string; name: string; input: Record<string, unknown> | string }[];
  text?: string;
  thinking?: { thinking: string; signature: string };
  usage?: AnthropicScriptedUsage;
}

export interface AnthropicErrorReply {
  type: 'error';
  status: number;
  /** Anthropic's error type, e.g. `overloaded_error`, `rate_limit_error`, `invalid_request_error`. */
  errorType: string;
  message?: string;
  /** Sent as an `error` event after `message_start` (HTTP 200) instead of an HTTP error. */
  midStream?: boolean;
  /** Sent as the `retry-after` header (seconds). */
  retryAfterSeconds?: number;
}

export type AnthropicReply = AnthropicTextReply | AnthropicToolUseReply | AnthropicErrorReply;

export interface AnthropicStubRequest {
  index: number;
  body: MessagesRequestBody;
  /** `x-api-key` as sent. */
  apiKey: string | null;
  stream: boolean;
  /** Approximate prompt tokens (the emulator's count). */
  promptTokens: number;
  /** The usage reported (null when the request was refused). */
  usage: CacheUsage | null;
  /** Set when the stub refused the request itself (a broken rule, a prompt too long, a scripted error). */
  rejection?: { status: number; type: string; message: string };
}

export type AnthropicResponder = (request: AnthropicStubRequest) => AnthropicReply | Promise<AnthropicReply>;

export interface AnthropicStubOptions {
  /** Port to listen on (127.0.0.1); default 0 (any free port). */
  port?: number;
  responder?: AnthropicResponder;
  /** Prompts above this many (approximate) tokens get 400 "prompt is too long". Default 200,000. */
  maxContextTokens?: number;
  /** The clock of the cache entries' TTL (tests move it). */
  now?: () => number;
  /** The minimum cacheable prefix by model; default Anthropic's table (minimumCacheableTokens). */
  minimumCacheTokens?: (model: string) => number;
}

export interface AnthropicStub {
  /** The root URL (`http://127.0.0.1:PORT`): ANTHROPIC_BASE_URL, the SDK's `baseURL`. */
  url: string;
  /** Every request received since start or the last reset (the same array, cleared in place). */
  requests: AnthropicStubRequest[];
  /** Cache figures over every answered request since start or the last reset. */
  totals(): CacheTotals & { outputTokens: number };
  setResponder(responder: AnthropicResponder): void;
  /** Clears requests, the cache and the totals. */
  reset(): void;
  close(): Promise<void>;
}

export const anthropicText = (
  text: string,
  options: Omit<AnthropicTextReply, 'type' | 'text'> = {},
): AnthropicTextReply => ({
  type: 'text',
  text,
  ...options,
});
export const anthropicToolUse = (
  calls: AnthropicToolUseReply['calls'],
  options: Omit<AnthropicToolUseReply, 'type' | 'calls'> = {},
): AnthropicToolUseReply => ({ type: 'tool_use', calls, ...options });
export const anthropicError = (
  status: number,
  errorType: string,
  options: Omit<AnthropicErrorReply, 'type' | 'status' | 'errorType'> = {},
): AnthropicErrorReply => ({ type: 'error', status, errorType, ...options });

/** The text blocks of the newest user message that are the user's own (not tool results, not server notes). */
export function lastUserTextOf(body: MessagesRequestBody): string {
  for (const message of [...body.messages].reverse()) {
    if (message.role !== 'user') continue;
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    const text = blocks.find((block) => block.type === 'text' && !String(block.text).startsWith('[Server note]'));
    if (text) return String(text.text);
  }
  return '';
}

export const anthropicEcho: AnthropicResponder = (request) =>
  anthropicText(`stub reply to: ${lastUserTextOf(request.body)}`);

/** A responder answering with `replies` in order, then with `fallback` (default the echo). */
export function anthropicSequence(
  replies: AnthropicReply[],
  fallback: AnthropicResponder = anthropicEcho,
): AnthropicResponder {
  const queue = [...replies];
  return (request) => queue.shift() ?? fallback(request);
}

/** The first broken request rule, as the API words it, or null. */
export function requestProblem(body: MessagesRequestBody): string | null {
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  if (body.messages[0]?.role !== 'user') return 'messages: the first message must use the "user" role';
  const breakpoints = flattenRequest(body).blocks.filter((block) => block.ttl !== null).length;
  if (breakpoints > ANTHROPIC_MAX_BREAKPOINTS)
    return `A maximum of ${ANTHROPIC_MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints}.`;
  for (let index = 0; index < body.messages.length; index += 1) {
    const message = body.messages[index]!;
    if (index > 0 && body.messages[index - 1]!.role === message.role)
      return `messages: roles must alternate between "user" and "assistant" (message ${index})`;
    const blocks = typeof message.content === 'string' ? [] : message.content;
    for (const block of blocks)
      if (block.type === 'text' && String(block.text ?? '').trim() === '')
        return `messages.${index}: text content blocks must contain non-whitespace text`;
    const calls = blocks.filter((block) => block.type === 'tool_use').map((block) => String(block.id));
    if (calls.length === 0) continue;
    const next = body.messages[index + 1];
    const answered = new Set(
      (typeof next?.content === 'string' ? [] : (next?.content ?? []))
        .filter((block) => block.type === 'tool_result')
        .map((block) => String(block.tool_use_id)),
    );
    const missing = calls.find((id) => !answered.has(id));
    if (missing)
      return `messages.${index + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing}`;
  }
  return null;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendError(
  response: ServerResponse,
  status: number,
  error: { type: string; message: string; retryAfterSeconds?: number | undefined },
): void {
  const { type, message } = error;
  response.writeHead(status, {
    'content-type': 'application/json',
    'request-id': `req_stub_${Date.now()}`,
    ...(error.retryAfterSeconds !== undefined ? { 'retry-after': String(error.retryAfterSeconds) } : {}),
  });
  response.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: `req_stub_${Date.now()}` }));
}

type Block = Record<string, unknown>;

function replyBlocks(reply: AnthropicTextReply | AnthropicToolUseReply, index: number): Block[] {
  const blocks: Block[] = [];
  if (reply.thinking) blocks.push({ type: 'thinking', ...reply.thinking });
  const text = reply.type === 'text' ? reply.text : reply.text;
  if (text) blocks.push({ type: 'text', text });
  if (reply.type === 'tool_use')
    reply.calls.forEach((call, position) =>
      blocks.push({
        type: 'tool_use',
        id: call.id ?? `toolu_stub_${index}_${position}`,
        name: call.name,
        input: call.input,
      }),
    );
  return blocks;
}

function scriptedUsage(usage: AnthropicScriptedUsage): CacheUsage {
  return {
    input_tokens: usage.input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
  };
}

/** A text or tool_use reply as the answer's blocks and message (`usage`: the scripted or emulated input usage). */
function answerOf(
  reply: AnthropicTextReply | AnthropicToolUseReply,
  recorded: AnthropicStubRequest,
  usage: CacheUsage,
) {
  const blocks = replyBlocks(reply, recorded.index);
  const output =
    reply.usage?.output_tokens ?? blocks.reduce((sum, block) => sum + approximateTokens(JSON.stringify(block)), 0);
  const message = {
    id: `msg_stub_${recorded.index}`,
    type: 'message',
    role: 'assistant',
    model: recorded.body.model,
    content: blocks,
    stop_reason: reply.type === 'tool_use' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { ...usage, output_tokens: output },
  };
  const streamOptions =
    reply.type === 'text'
      ? {
          ...(reply.chunkDelayMs ? { chunkDelayMs: reply.chunkDelayMs } : {}),
          ...(reply.chunks ? { chunks: reply.chunks } : {}),
        }
      : {};
  return { blocks, output, message, streamOptions };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function streamMessage(
  response: ServerResponse,
  message: Record<string, unknown>,
  blocks: Block[],
  options: { chunkDelayMs?: number; chunks?: string[]; midStreamError?: AnthropicErrorReply },
): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, data: Record<string, unknown>) =>
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const usage = message.usage as Record<string, number>;
  send('message_start', {
    message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
  });
  if (options.midStreamError) {
    send('error', {
      error: { type: options.midStreamError.errorType, message: options.midStreamError.message ?? 'Overloaded' },
    });
    response.end();
    return;
  }
  for (const [index, block] of blocks.entries()) {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      const text = String(block.text);
      const pieces = options.chunks ?? text.match(/.{1,16}/gs) ?? [];
      for (const piece of pieces) {
        send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
        if (options.chunkDelayMs) await sleep(options.chunkDelayMs);
      }
    } else if (block.type === 'tool_use') {
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      send('content_block_delta', {
        index,
        delta: {
          type: 'input_json_delta',
          partial_json: typeof block.input === 'string' ? block.input : JSON.stringify(block.input),
        },
      });
    } else if (block.type === 'thinking') {
      send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } });
      send('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    }
    send('content_block_stop', { index });
  }
  send('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage });
  send('message_stop', {});
  response.end();
}

/** Starts the stub on 127.0.0.1 (`port`, default any free one). */
export async function startAnthropicStub(options: AnthropicStubOptions = {}): Promise<AnthropicStub> {
  let responder = options.responder ?? anthropicEcho;
  const requests: AnthropicStubRequest[] = [];
  const cache = new AnthropicCacheEmulator({
    ...(options.now ? { now: options.now } : {}),
    ...(options.minimumCacheTokens ? { minimumTokens: options.minimumCacheTokens } : {}),
  });
  let outputTokens = 0;
  const maxContextTokens = options.maxContextTokens ?? 200_000;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST' || !request.url?.startsWith('/v1/messages')) {
      sendError(response, 404, { type: 'not_found_error', message: `Not found: ${request.method} ${request.url}` });
      return;
    }
    let body: MessagesRequestBody;
    try {
      body = JSON.parse(await readBody(request)) as MessagesRequestBody;
    } catch {
      sendError(response, 400, { type: 'invalid_request_error', message: 'The request body is not valid JSON' });
      return;
    }
    const apiKey = request.headers['x-api-key'];
    const recorded: AnthropicStubRequest = {
      index: requests.length,
      body,
      apiKey: typeof apiKey === 'string' ? apiKey : null,
      stream: body.stream === true,
      promptTokens: 0,
      usage: null,
    };
    requests.push(recorded);
    const reject = (status: number, type: string, message: string, retryAfterSeconds?: number) => {
      recorded.rejection = { status, type, message };
      sendError(response, status, { type, message, retryAfterSeconds });
    };
    const problem = requestProblem(body);
    if (problem) return reject(400, 'invalid_request_error', problem);
    recorded.promptTokens = flattenRequest(body).total;
    if (recorded.promptTokens > maxContextTokens)
      return reject(
        400,
        'invalid_request_error',
        `prompt is too long: ${recorded.promptTokens} tokens > ${maxContextTokens} maximum`,
      );
    const reply = await responder(recorded);
    if (reply.type === 'error' && !reply.midStream)
      return reject(reply.status, reply.errorType, reply.message ?? reply.errorType, reply.retryAfterSeconds);
    const emulated = cache.use(body);
    const usage = reply.type === 'error' || !reply.usage ? emulated : scriptedUsage(reply.usage);
    recorded.usage = usage;
    if (reply.type === 'error') {
      recorded.rejection = { status: 200, type: reply.errorType, message: reply.message ?? reply.errorType };
      await streamMessage(
        response,
        { id: 'msg_stub', type: 'message', role: 'assistant', model: body.model, usage },
        [],
        {
          midStreamError: reply,
        },
      );
      return;
    }
    const answer = answerOf(reply, recorded, usage);
    outputTokens += answer.output;
    if (!recorded.stream) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer.message));
      return;
    }
    await streamMessage(response, answer.message, answer.blocks, answer.streamOptions);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendError(response, 500, { type: 'api_error', message: String(error) });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    totals: () => ({ ...cache.totals, outputTokens }),
    setResponder(next) {
      responder = next;
    },
    reset() {
      requests.length = 0;
      cache.clear();
      outputTokens = 0;
      responder = options.responder ?? anthropicEcho;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
