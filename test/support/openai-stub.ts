/**
 * An OpenAI-compatible HTTP server for tests and benchmarks: real `ChatOpenAI` talks to it over
 * 127.0.0.1. It speaks `POST /v1/chat/completions` (SSE streaming in OpenAI's chunk format, with a
 * usage chunk when `stream_options.include_usage`, and non-streaming) and `GET /v1/models`, counts
 * prompt tokens the way OpenAI does, and rejects what OpenAI rejects (see openai-stub-validation.ts),
 * including prompts above `maxContextTokens` with `context_length_exceeded`.
 *
 * Tests script answers with a responder: `stub.setResponder((request) => replyWithText('hi'))`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  countChatPromptTokens,
  countTextTokens,
  encodingForModel,
  wireContentText,
  type WireChatMessage,
  type OpenAIToolDefinition,
} from '../../src/llm/count-chat-tokens.js';
import { validateChatRequest, type OpenAIErrorBody } from './openai-stub-validation.js';

/** A chat completions request body as the stub parsed it (after validation). */
export interface StubRequestBody {
  model: string;
  messages: WireChatMessage[];
  tools?: OpenAIToolDefinition[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  temperature?: number;
  [key: string]: unknown;
}

/** One request the stub received, in arrival order. */
export interface StubRequest {
  /** 0-based arrival index since start or the last reset. */
  index: number;
  /** `Date.now()` when the body was read. */
  receivedAt: number;
  body: StubRequestBody;
  /** What `classifyRequest` said (default `'chat'`): tells summarizer calls from chat calls. */
  kind: string;
  /** Prompt tokens counted as OpenAI does. */
  promptTokens: number;
  /** The bearer token the client sent. */
  apiKey: string | null;
  /** Set when the stub rejected the request itself (validation or context length). */
  rejection?: OpenAIErrorBody;
  /** HTTP status sent (undefined while the answer is still being decided). */
  status?: number;
}

interface StreamTiming {
  /** Wait before the first byte (headers included). Default 0. */
  firstByteDelayMs?: number;
  /** Wait between streamed chunks. Default 0. */
  chunkDelayMs?: number;
}

/** A plain text answer; streamed as `chunks` (default: one chunk per word). */
export interface TextReply extends StreamTiming {
  type: 'text';
  text: string;
  chunks?: string[];
  finishReason?: 'stop' | 'length' | 'content_filter';
}

/** Tool calls (several = parallel), streamed as OpenAI streams tool_call deltas. */
export interface ToolCallsReply extends StreamTiming {
  type: 'tool_calls';
  toolCalls: Array<{ id?: string; name: string; arguments: Record<string, unknown> | string }>;
  /** Text streamed before the calls (some models say something first). */
  text?: string;
}

/** An HTTP error with OpenAI's error JSON. */
export interface ErrorReply {
  type: 'error';
  status: number;
  message?: string;
  errorType?: string;
  code?: string | null;
  /** Sent as the `retry-after` header (seconds). */
  retryAfterSeconds?: number;
  headers?: Record<string, string>;
  firstByteDelayMs?: number;
}

/** A stream that stops mid-answer: `text` is sent in chunks, then the socket is destroyed. */
export interface CutReply extends StreamTiming {
  type: 'cut';
  text: string;
}

export type StubReply = TextReply | ToolCallsReply | ErrorReply | CutReply;
export type StubResponder = (request: StubRequest) => StubReply | Promise<StubReply>;

export interface OpenAIStubOptions {
  /** Prompts above this many tokens get 400 `context_length_exceeded`. Default 128,000. */
  maxContextTokens?: number;
  /** Models listed by `GET /v1/models`. Default `['gpt-4o-mini']`. */
  models?: string[];
  /** When set, requests must carry this bearer key (401 otherwise). Default: any key. */
  apiKey?: string;
  /** Labels each request (e.g. `'summary'` vs `'chat'` by inspecting the messages). Default `'chat'`. */
  classifyRequest?: (body: StubRequestBody) => string;
  /** Called for every chat request after it is recorded, before it is answered. */
  onRequest?: (request: StubRequest) => void;
  /** Initial responder. Default: `echoResponder`. */
  responder?: StubResponder;
}

export interface OpenAIStub {
  /** Base URL ending in `/v1`, for `configuration.baseURL`. */
  url: string;
  /** Every chat request received since start or the last reset (the same array, cleared in place). */
  requests: StubRequest[];
  setResponder(responder: StubResponder): void;
  setMaxContextTokens(tokens: number): void;
  /** Clears the recorded requests and restores the start options. */
  reset(): void;
  close(): Promise<void>;
}

/** Text reply helper. */
export function replyWithText(text: string, options: Omit<TextReply, 'type' | 'text'> = {}): TextReply {
  return { type: 'text', text, ...options };
}

/** Tool calls reply helper; several calls are parallel calls. */
export function replyWithToolCalls(toolCalls: ToolCallsReply['toolCalls'], options: Omit<ToolCallsReply, 'type' | 'toolCalls'> = {}): ToolCallsReply {
  return { type: 'tool_calls', toolCalls, ...options };
}

/** HTTP error reply helper (500, 503, 429 with `retryAfterSeconds`, ...). */
export function replyWithError(status: number, options: Omit<ErrorReply, 'type' | 'status'> = {}): ErrorReply {
  return { type: 'error', status, ...options };
}

/** A stream cut after `text` was sent. */
export function replyWithCut(text: string, options: Omit<CutReply, 'type' | 'text'> = {}): CutReply {
  return { type: 'cut', text, ...options };
}

/** The text of the last user message of a request ('' if none). */
export function lastUserText(body: StubRequestBody): string {
  const user = [...body.messages].reverse().find((message) => message.role === 'user');
  return user ? wireContentText(user.content) : '';
}

/** Default responder: a deterministic echo of the last user message. */
export const echoResponder: StubResponder = (request) => replyWithText(`stub reply to: ${lastUserText(request.body)}`);

/** A responder answering with `replies` in order, then with `fallback` (default `echoResponder`). */
export function replySequence(replies: StubReply[], fallback: StubResponder = echoResponder): StubResponder {
  const queue = [...replies];
  return (request) => queue.shift() ?? fallback(request);
}

const DEFAULT_MAX_CONTEXT_TOKENS = 128_000;

const DEFAULT_ERROR_TEXT: Record<number, { message: string; type: string; code: string | null }> = {
  429: { message: 'Rate limit reached for requests. Please try again later.', type: 'requests', code: 'rate_limit_exceeded' },
  500: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', code: null },
  502: { message: 'Bad gateway.', type: 'server_error', code: null },
  503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', code: null },
};

/** Starts the stub on 127.0.0.1, port 0. */
export async function startOpenAIStub(options: OpenAIStubOptions = {}): Promise<OpenAIStub> {
  const startResponder = options.responder ?? echoResponder;
  const startMaxContextTokens = options.maxContextTokens ?? DEFAULT_MAX_CONTEXT_TOKENS;
  const state = { responder: startResponder, maxContextTokens: startMaxContextTokens, requests: [] as StubRequest[], sequence: 0 };

  const server = createServer((request, response) => {
    handleRequest({ request, response, options, state }).catch((error: unknown) => {
      // A test bug (a throwing responder) must be visible, and must not hang the client.
      console.error('openai-stub: handler failed', error);
      if (!response.headersSent) sendError(response, 500, { message: String(error), type: 'server_error', param: null, code: null });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: state.requests,
    setResponder: (responder) => {
      state.responder = responder;
    },
    setMaxContextTokens: (tokens) => {
      state.maxContextTokens = tokens;
    },
    reset: () => {
      state.requests.length = 0;
      state.responder = startResponder;
      state.maxContextTokens = startMaxContextTokens;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

interface StubState {
  responder: StubResponder;
  maxContextTokens: number;
  requests: StubRequest[];
  sequence: number;
}

interface HandlerContext {
  request: IncomingMessage;
  response: ServerResponse;
  options: OpenAIStubOptions;
  state: StubState;
}

async function handleRequest({ request, response, options, state }: HandlerContext): Promise<void> {
  const path = (request.url ?? '').split('?')[0];
  const apiKey = readBearer(request);
  if (apiKey === null) {
    return sendError(response, 401, { message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", type: 'invalid_request_error', param: null, code: null });
  }
  if (options.apiKey !== undefined && apiKey !== options.apiKey) {
    return sendError(response, 401, { message: `Incorrect API key provided: ${apiKey.slice(0, 6)}****.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' });
  }
  if (request.method === 'GET' && path === '/v1/models') return sendModels(response, options.models ?? ['gpt-4o-mini']);
  if (request.method === 'POST' && path === '/v1/chat/completions') return handleChatCompletion({ request, response, options, state }, apiKey);
  return sendError(response, 404, { message: `Invalid URL (${request.method ?? 'GET'} ${path})`, type: 'invalid_request_error', param: null, code: null });
}

async function handleChatCompletion(context: HandlerContext, apiKey: string): Promise<void> {
  const { request, response, options, state } = context;
  const rawBody = await readBody(request);
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    return sendError(response, 400, { message: 'We could not parse the JSON body of your request. (HINT: This likely means you aren\'t using your HTTP library correctly.)', type: 'invalid_request_error', param: null, code: null });
  }
  const rejection = validateChatRequest(parsed);
  const body = parsed as StubRequestBody;
  const promptTokens = rejection ? 0 : countChatPromptTokens({ model: body.model, messages: body.messages, tools: body.tools });
  const record: StubRequest = {
    index: state.requests.length,
    receivedAt: Date.now(),
    body,
    kind: rejection ? 'invalid' : (options.classifyRequest?.(body) ?? 'chat'),
    promptTokens,
    apiKey,
  };
  state.requests.push(record);
  const overflow = rejection ?? contextLengthError(record, state.maxContextTokens);
  if (overflow) {
    record.rejection = overflow;
    record.status = 400;
    return sendError(response, 400, overflow);
  }
  options.onRequest?.(record);
  const reply = await state.responder(record);
  record.status = reply.type === 'error' ? reply.status : 200;
  const closed = closedSignal(response);
  const completion = { id: `chatcmpl-stub${++state.sequence}`, created: Math.floor(Date.now() / 1000), model: body.model };
  await sleep(reply.firstByteDelayMs ?? 0, undefined, { signal: closed }).catch(() => undefined);
  if (closed.aborted) return;
  if (reply.type === 'error') return sendErrorReply(response, reply);
  if (body.stream === true) return streamReply({ response, reply, record, completion, closed });
  return sendCompletion({ response, reply, record, completion });
}

function contextLengthError(record: StubRequest, maxContextTokens: number): OpenAIErrorBody | null {
  if (record.promptTokens <= maxContextTokens) return null;
  const tools = record.body.tools ?? [];
  const messageTokens = countChatPromptTokens({ model: record.body.model, messages: record.body.messages });
  const detail = tools.length > 0 ? ` (${messageTokens} in the messages, ${record.promptTokens - messageTokens} in the functions)` : '';
  return {
    message: `This model's maximum context length is ${maxContextTokens} tokens. However, your messages resulted in ${record.promptTokens} tokens${detail}. Please reduce the length of the messages${tools.length > 0 ? ' or functions' : ''}.`,
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  };
}

interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

function wireToolCalls(reply: ToolCallsReply): WireToolCall[] {
  return reply.toolCalls.map((call) => ({
    id: call.id ?? `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    type: 'function',
    function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) },
  }));
}

function replyText(reply: TextReply | ToolCallsReply | CutReply): string {
  return reply.type === 'tool_calls' ? (reply.text ?? '') : reply.text;
}

function completionTokens(model: string, text: string, toolCalls: WireToolCall[]): number {
  const encoding = encodingForModel(model);
  let tokens = countTextTokens(text, encoding);
  for (const call of toolCalls) tokens += 3 + countTextTokens(call.function.name, encoding) + countTextTokens(call.function.arguments, encoding);
  return tokens;
}

function usageOf(promptTokens: number, outputTokens: number) {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: outputTokens,
    total_tokens: promptTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function sendCompletion({ response, reply, record, completion }: { response: ServerResponse; reply: TextReply | ToolCallsReply | CutReply; record: StubRequest; completion: CompletionIdentity }): void {
  if (reply.type === 'cut') {
    response.destroy();
    return;
  }
  const toolCalls = reply.type === 'tool_calls' ? wireToolCalls(reply) : [];
  const text = replyText(reply);
  const message = {
    role: 'assistant',
    content: toolCalls.length > 0 && text === '' ? null : text,
    ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
    refusal: null,
    annotations: [],
  };
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : ((reply as TextReply).finishReason ?? 'stop');
  sendJson(response, 200, {
    ...completion,
    object: 'chat.completion',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
    usage: usageOf(record.promptTokens, completionTokens(record.body.model, text, toolCalls)),
    service_tier: 'default',
    system_fingerprint: 'fp_stub',
  });
}

/** One word (with its trailing space) per chunk, so deltas arrive token-ish. */
function splitIntoChunks(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

interface StreamContext {
  response: ServerResponse;
  reply: TextReply | ToolCallsReply | CutReply;
  record: StubRequest;
  completion: CompletionIdentity;
  closed: AbortSignal;
}

async function streamReply({ response, reply, record, completion, closed }: StreamContext): Promise<void> {
  const includeUsage = record.body.stream_options?.include_usage === true;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-request-id': `req_${completion.id}`,
  });
  const writeChunk = async (delta: Record<string, unknown>, finishReason: string | null): Promise<void> => {
    const chunk = {
      ...completion,
      object: 'chat.completion.chunk',
      service_tier: 'default',
      system_fingerprint: 'fp_stub',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage && { usage: null }),
    };
    await write(response, `data: ${JSON.stringify(chunk)}\n\n`);
  };
  const pause = () => sleep(reply.chunkDelayMs ?? 0, undefined, { signal: closed }).catch(() => undefined);

  const text = replyText(reply);
  const textChunks = reply.type === 'text' && reply.chunks ? reply.chunks : splitIntoChunks(text);
  const toolCalls = reply.type === 'tool_calls' ? wireToolCalls(reply) : [];
  const startsWithToolCall = toolCalls.length > 0 && textChunks.length === 0;
  if (!startsWithToolCall) await writeChunk({ role: 'assistant', content: '', refusal: null }, null);
  for (const piece of textChunks) {
    await pause();
    if (closed.aborted) return;
    await writeChunk({ content: piece }, null);
  }
  if (reply.type === 'cut') {
    // Let the partial answer reach the client, then drop the connection without [DONE].
    await sleep(20);
    response.socket?.destroy();
    return;
  }
  for (const [index, call] of toolCalls.entries()) {
    await pause();
    if (closed.aborted) return;
    const opening = { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } };
    await writeChunk(index === 0 && startsWithToolCall ? { role: 'assistant', content: null, tool_calls: [opening], refusal: null } : { tool_calls: [opening] }, null);
    for (const piece of call.function.arguments.match(/[\s\S]{1,8}/g) ?? []) {
      await pause();
      if (closed.aborted) return;
      await writeChunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null);
    }
  }
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : ((reply as TextReply).finishReason ?? 'stop');
  await writeChunk({}, finishReason);
  if (includeUsage) {
    const usage = usageOf(record.promptTokens, completionTokens(record.body.model, text, toolCalls));
    await write(response, `data: ${JSON.stringify({ ...completion, object: 'chat.completion.chunk', service_tier: 'default', system_fingerprint: 'fp_stub', choices: [], usage })}\n\n`);
  }
  await write(response, 'data: [DONE]\n\n');
  response.end();
}

function sendErrorReply(response: ServerResponse, reply: ErrorReply): void {
  const defaults = DEFAULT_ERROR_TEXT[reply.status] ?? { message: `Stub error ${reply.status}.`, type: reply.status >= 500 ? 'server_error' : 'invalid_request_error', code: null };
  const headers: Record<string, string> = { ...reply.headers };
  if (reply.retryAfterSeconds !== undefined) headers['retry-after'] = String(reply.retryAfterSeconds);
  sendError(response, reply.status, {
    message: reply.message ?? defaults.message,
    type: reply.errorType ?? defaults.type,
    param: null,
    code: reply.code === undefined ? defaults.code : reply.code,
  }, headers);
}

function sendModels(response: ServerResponse, models: string[]): void {
  sendJson(response, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'openai-stub' })) });
}

function sendError(response: ServerResponse, status: number, error: OpenAIErrorBody, headers: Record<string, string> = {}): void {
  sendJson(response, status, { error }, headers);
}

function sendJson(response: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(payload);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  response.end(body);
}

function readBearer(request: IncomingMessage): string | null {
  const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
  return match?.[1] ?? null;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** Aborts when the client goes away (or the response ends), so delays stop early. */
function closedSignal(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => controller.abort());
  return controller.signal;
}

function write(response: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => {
    if (response.destroyed || response.writableEnded) return resolve();
    response.write(data, () => resolve());
  });
}
