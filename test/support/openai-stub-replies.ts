/**
 * What the OpenAI stub records and answers: request records, scripted replies, and the writers
 * that put them on the wire in OpenAI's exact JSON and SSE chunk formats.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  countTextTokens,
  encodingForModel,
  type OpenAIToolDefinition,
  type WireChatMessage,
} from '../../src/llm/count-chat-tokens.js';
import type { OpenAIErrorBody } from './openai-stub-validation.js';

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
  /** `performance.now()` when the request's headers arrived (benchmarks: pre-model overhead). */
  arrivedAt?: number;
  /** `performance.now()` when the last byte of the answer was handed to the socket (benchmarks: post-model overhead). */
  finishedAt?: number;
  body: StubRequestBody;
  /** What `classifyRequest` said (default `'chat'`): tells summarizer calls from chat calls. */
  kind: string;
  /** Prompt tokens counted as OpenAI does. */
  promptTokens: number;
  /** Prompt tokens reported as cached (with the stub's `promptCache`; absent otherwise). */
  cachedTokens?: number;
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
  /** No usage chunk even when the client asks for one (servers that never report usage in streams). */
  omitUsage?: boolean;
  /** The usage to report instead of the counted one (a contract scripting what the provider says). */
  usage?: { promptTokens: number; completionTokens: number; cachedTokens?: number };
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

const DEFAULT_ERROR_TEXT: Record<number, { message: string; type: string; code: string | null }> = {
  429: {
    message: 'Rate limit reached for requests. Please try again later.',
    type: 'requests',
    code: 'rate_limit_exceeded',
  },
  500: {
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
    code: null,
  },
  502: { message: 'Bad gateway.', type: 'server_error', code: null },
  503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', code: null },
};

export interface CompletionIdentity {
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
    function: {
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    },
  }));
}

function replyText(reply: TextReply | ToolCallsReply | CutReply): string {
  return reply.type === 'tool_calls' ? (reply.text ?? '') : reply.text;
}

function completionTokens(model: string, text: string, toolCalls: WireToolCall[]): number {
  const encoding = encodingForModel(model);
  let tokens = countTextTokens(text, encoding);
  for (const call of toolCalls)
    tokens += 3 + countTextTokens(call.function.name, encoding) + countTextTokens(call.function.arguments, encoding);
  return tokens;
}

function usageOf(promptTokens: number, outputTokens: number, cachedTokens = 0) {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: outputTokens,
    total_tokens: promptTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** The reply's scripted usage, else the counted one. */
function replyUsage(reply: StreamTiming, record: StubRequest, outputTokens: number) {
  const scripted = reply.usage;
  return scripted
    ? usageOf(scripted.promptTokens, scripted.completionTokens, scripted.cachedTokens ?? 0)
    : usageOf(record.promptTokens, outputTokens, record.cachedTokens);
}

export function sendCompletion({
  response,
  reply,
  record,
  completion,
}: {
  response: ServerResponse;
  reply: TextReply | ToolCallsReply | CutReply;
  record: StubRequest;
  completion: CompletionIdentity;
}): void {
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
    usage: replyUsage(reply, record, completionTokens(record.body.model, text, toolCalls)),
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

export async function streamReply({ response, reply, record, completion, closed }: StreamContext): Promise<void> {
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
    await writeChunk(
      index === 0 && startsWithToolCall
        ? { role: 'assistant', content: null, tool_calls: [opening], refusal: null }
        : { tool_calls: [opening] },
      null,
    );
    for (const piece of call.function.arguments.match(/[\s\S]{1,8}/g) ?? []) {
      await pause();
      if (closed.aborted) return;
      await writeChunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null);
    }
  }
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : ((reply as TextReply).finishReason ?? 'stop');
  await writeChunk({}, finishReason);
  if (includeUsage && !(reply as StreamTiming).omitUsage) {
    const usage = replyUsage(reply, record, completionTokens(record.body.model, text, toolCalls));
    await write(
      response,
      `data: ${JSON.stringify({ ...completion, object: 'chat.completion.chunk', service_tier: 'default', system_fingerprint: 'fp_stub', choices: [], usage })}\n\n`,
    );
  }
  await write(response, 'data: [DONE]\n\n');
  response.end();
}

export function sendErrorReply(response: ServerResponse, reply: ErrorReply): void {
  const defaults = DEFAULT_ERROR_TEXT[reply.status] ?? {
    message: `Stub error ${reply.status}.`,
    type: reply.status >= 500 ? 'server_error' : 'invalid_request_error',
    code: null,
  };
  const headers: Record<string, string> = { ...reply.headers };
  if (reply.retryAfterSeconds !== undefined) headers['retry-after'] = String(reply.retryAfterSeconds);
  sendError(
    response,
    reply.status,
    {
      message: reply.message ?? defaults.message,
      type: reply.errorType ?? defaults.type,
      param: null,
      code: reply.code === undefined ? defaults.code : reply.code,
    },
    headers,
  );
}

export function sendModels(response: ServerResponse, models: string[]): void {
  sendJson(response, 200, {
    object: 'list',
    data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'openai-stub' })),
  });
}

export function sendError(
  response: ServerResponse,
  status: number,
  error: OpenAIErrorBody,
  headers: Record<string, string> = {},
): void {
  sendJson(response, status, { error }, headers);
}

export function sendJson(
  response: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(payload);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  response.end(body);
}

function write(response: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => {
    if (response.destroyed || response.writableEnded) return resolve();
    response.write(data, () => resolve());
  });
}
