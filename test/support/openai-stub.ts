/**
 * An OpenAI-compatible HTTP server for tests and benchmarks: real `ChatOpenAI` talks to it over
 * 127.0.0.1. It speaks `POST /v1/chat/completions` (SSE streaming in OpenAI's chunk format, with a
 * usage chunk when `stream_options.include_usage`, and non-streaming) and `GET /v1/models`, counts
 * prompt tokens by OpenAI's published rules with its own counter (published-token-count.ts, not the product's), and rejects what OpenAI rejects (see openai-stub-validation.ts),
 * including prompts above `maxContextTokens` with `context_length_exceeded`.
 *
 * Tests script answers with a responder: `stub.setResponder((request) => replyWithText('hi'))`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { RECALL_HEADING } from '../../src/core/context/build-recall-slot.js';
import { wireContentText } from '../../src/llm/count-chat-tokens.js';
import { CACHE_STEP_TOKENS, PromptCacheEmulator } from './prompt-cache-emulator.js';
import { publishedPromptTokens } from './published-token-count.js';
import {
  sendCompletion,
  sendError,
  sendErrorReply,
  sendModels,
  streamReply,
  type CutReply,
  type ErrorReply,
  type StubReply,
  type StubRequest,
  type StubRequestBody,
  type StubResponder,
  type TextReply,
  type ToolCallsReply,
} from './openai-stub-replies.js';
import { validateChatRequest, validateStrictTemplate, type OpenAIErrorBody } from './openai-stub-validation.js';

export type { CutReply, ErrorReply, StubReply, StubRequest, StubRequestBody, StubResponder, TextReply, ToolCallsReply };

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
  /**
   * Count each prompt's tokens (for `promptTokens`, usage and the context-length check). Default true. Benchmarks
   * that load the server turn it off so the stub's tokenizing does not compete with the server for the CPU: prompts
   * then count as 0 tokens and are never too long (answer with `omitUsage` so no usage of 0 is reported).
   */
  countPromptTokens?: boolean;
  /**
   * Answer 400 like a strict chat template (vLLM/Ollama serving many open models): one leading system message,
   * strict user/assistant alternation, no `tool` role when no tools are offered (see validateStrictTemplate).
   */
  strictTemplate?: boolean;
  /**
   * A model whose tokenizer counts prompts higher (or lower) than OpenAI's rules: the published count is multiplied
   * by this (usage, the context-length check). Default 1.
   */
  promptTokenScale?: number;
  /**
   * Report `usage.prompt_tokens_details.cached_tokens` as OpenAI's prompt cache would (see prompt-cache-emulator.ts:
   * the longest prefix shared with an earlier prompt, both at least 1,024 tokens, in 128-token steps). Default false
   * (0 cached tokens).
   */
  promptCache?: boolean;
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
  /** Closes the keep-alive connections no request is using (a benchmark settling the server between runs). */
  closeIdleConnections(): void;
  close(): Promise<void>;
}

/** Text reply helper. */
export function replyWithText(text: string, options: Omit<TextReply, 'type' | 'text'> = {}): TextReply {
  return { type: 'text', text, ...options };
}

/** Tool calls reply helper; several calls are parallel calls. */
export function replyWithToolCalls(
  toolCalls: ToolCallsReply['toolCalls'],
  options: Omit<ToolCallsReply, 'type' | 'toolCalls'> = {},
): ToolCallsReply {
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

/**
 * The text of the last user message of a request ('' if none): what the user asked, not the recall slot the server
 * puts right after it (as a model reads the labelled block as quoted material, not as the question).
 */
export function lastUserText(body: StubRequestBody): string {
  const user = [...body.messages]
    .reverse()
    .find((message) => message.role === 'user' && !wireContentText(message.content).startsWith(RECALL_HEADING));
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

/** Starts the stub on 127.0.0.1, port 0. */
export async function startOpenAIStub(options: OpenAIStubOptions = {}): Promise<OpenAIStub> {
  const startResponder = options.responder ?? echoResponder;
  const startMaxContextTokens = options.maxContextTokens ?? DEFAULT_MAX_CONTEXT_TOKENS;
  const state = {
    responder: startResponder,
    maxContextTokens: startMaxContextTokens,
    requests: [] as StubRequest[],
    sequence: 0,
    cache: new PromptCacheEmulator(),
  };

  const server = createServer((request, response) => {
    handleRequest({ request, response, options, state }).catch((error: unknown) => {
      // A test bug (a throwing responder) must be visible, and must not hang the client.
      console.error('openai-stub: handler failed', error);
      if (!response.headersSent)
        sendError(response, 500, { message: String(error), type: 'server_error', param: null, code: null });
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
      state.cache.clear();
      state.responder = startResponder;
      state.maxContextTokens = startMaxContextTokens;
    },
    closeIdleConnections: () => server.closeIdleConnections(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

interface StubState {
  cache: PromptCacheEmulator;
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
    return sendError(response, 401, {
      message:
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
      type: 'invalid_request_error',
      param: null,
      code: null,
    });
  }
  if (options.apiKey !== undefined && apiKey !== options.apiKey) {
    return sendError(response, 401, {
      message: `Incorrect API key provided: ${apiKey.slice(0, 6)}****.`,
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    });
  }
  if (request.method === 'GET' && path === '/v1/models') return sendModels(response, options.models ?? ['gpt-4o-mini']);
  if (request.method === 'POST' && path === '/v1/chat/completions')
    return handleChatCompletion({ request, response, options, state }, apiKey);
  return sendError(response, 404, {
    message: `Invalid URL (${request.method ?? 'GET'} ${path})`,
    type: 'invalid_request_error',
    param: null,
    code: null,
  });
}

async function handleChatCompletion(context: HandlerContext, apiKey: string): Promise<void> {
  const { request, response, options, state } = context;
  const arrivedAt = performance.now();
  const rawBody = await readBody(request);
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    return sendError(response, 400, {
      message:
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
      type: 'invalid_request_error',
      param: null,
      code: null,
    });
  }
  const rejection = validateChatRequest(parsed) ?? (options.strictTemplate ? validateStrictTemplate(parsed) : null);
  const body = parsed as StubRequestBody;
  const promptTokens =
    rejection || options.countPromptTokens === false
      ? 0
      : Math.round(
          publishedPromptTokens({ model: body.model, messages: body.messages, tools: body.tools ?? [] }) *
            (options.promptTokenScale ?? 1),
        );
  const record: StubRequest = {
    index: state.requests.length,
    receivedAt: Date.now(),
    body,
    kind: rejection ? 'invalid' : (options.classifyRequest?.(body) ?? 'chat'),
    promptTokens,
    apiKey,
    arrivedAt,
  };
  response.once('finish', () => {
    record.finishedAt = performance.now();
  });
  state.requests.push(record);
  const overflow = rejection ?? contextLengthError(record, state.maxContextTokens);
  if (overflow) {
    record.rejection = overflow;
    record.status = 400;
    return sendError(response, 400, overflow);
  }
  // Never more than the prompt (the emulator reads the template's markup too), still in 128-token steps.
  if (options.promptCache)
    record.cachedTokens = Math.min(
      state.cache.observe(body),
      Math.floor(promptTokens / CACHE_STEP_TOKENS) * CACHE_STEP_TOKENS,
    );
  options.onRequest?.(record);
  const reply = await state.responder(record);
  record.status = reply.type === 'error' ? reply.status : 200;
  const closed = closedSignal(response);
  const completion = {
    id: `chatcmpl-stub${++state.sequence}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model,
  };
  await sleep(reply.firstByteDelayMs ?? 0, undefined, { signal: closed }).catch(() => undefined);
  if (closed.aborted) return;
  if (reply.type === 'error') return sendErrorReply(response, reply);
  if (body.stream === true) return streamReply({ response, reply, record, completion, closed });
  return sendCompletion({ response, reply, record, completion });
}

function contextLengthError(record: StubRequest, maxContextTokens: number): OpenAIErrorBody | null {
  if (record.promptTokens <= maxContextTokens) return null;
  const tools = record.body.tools ?? [];
  const messageTokens = publishedPromptTokens({ model: record.body.model, messages: record.body.messages });
  const detail =
    tools.length > 0
      ? ` (${messageTokens} in the messages, ${record.promptTokens - messageTokens} in the functions)`
      : '';
  return {
    message: `This model's maximum context length is ${maxContextTokens} tokens. However, your messages resulted in ${record.promptTokens} tokens${detail}. Please reduce the length of the messages${tools.length > 0 ? ' or functions' : ''}.`,
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  };
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
