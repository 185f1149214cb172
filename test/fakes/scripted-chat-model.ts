/**
 * A scripted fake of the chat and summarizer ports: each call plays the next reply of its script (text streamed as the
 * given chunks, tool calls, usage, or a failure), honours its abort signal as the real adapters do (a core
 * `ModelCallError` of kind `aborted`, no delta after the abort), and records what it was asked. Held to the adapters'
 * behaviour by test/contracts/chat-model-port.contract.ts and summarizer-port.contract.ts.
 */
import { ModelCallError } from '../../src/core/errors/model-call-error';
import type { OpenAIFunctionTool, PackMessage, ToolCall } from '../../src/core/context/types';
import type { ChatModelPort, ChatResult, SummarizerPort } from '../../src/core/ports';

/** A point in a streamed reply where the fake waits (e.g. until the test lets it go); an abort ends the wait. */
export type ScriptedPause = () => Promise<unknown>;

/** What the "provider" answers to one call. */
export interface ScriptedReply {
  /** The answer's text, streamed as these deltas in order; a function is a pause between them. Default: none. */
  chunks?: (string | ScriptedPause)[];
  toolCalls?: ToolCall[];
  /** Calls whose arguments were not a JSON object, as the adapters report them. */
  invalidToolCalls?: NonNullable<ChatResult['invalidToolCalls']>;
  /** The usage the provider reported. Default null (it reported none). */
  usage?: ChatResult['usage'];
  /** Thrown after the chunks were streamed: a provider failure is a core `ModelCallError`. */
  error?: unknown;
  /** Wait before each chunk (ms; an abort ends it). Default 0. */
  chunkDelayMs?: number;
}

/** What one call was given. */
export interface ScriptedCall {
  kind: 'chat' | 'summary';
  messages: PackMessage[];
  /** As passed (the same array: tests check that a tool list is reused). */
  tools: OpenAIFunctionTool[] | undefined;
  toolChoice: 'auto' | 'none' | undefined;
  cacheKey: string | undefined;
  signal: AbortSignal | undefined;
}

/** A reply, or one computed from the call (e.g. an echo of the last user message). */
export type ScriptStep = ScriptedReply | ((call: ScriptedCall) => ScriptedReply | Promise<ScriptedReply>);

export interface ScriptedChatModel extends ChatModelPort, SummarizerPort {
  /** Every call, chat and summary alike, in order. */
  readonly calls: ScriptedCall[];
  /** Replies of the script not played yet. */
  pending(): number;
  /** Appends replies to the script. */
  push(...steps: ScriptStep[]): void;
}

export interface ScriptedChatModelOptions {
  /** Default `scripted`. */
  model?: string;
  /** Played in order, one per call (chat or summary). */
  replies?: ScriptStep[];
  /** Played once the replies are used up; without it such a call throws (a test that asked more than it scripted). */
  fallback?: ScriptStep;
}

/** A text reply streamed as `chunks` (a string is streamed word by word). */
export function scriptedText(
  chunks: string | (string | ScriptedPause)[],
  options: Omit<ScriptedReply, 'chunks'> = {},
): ScriptedReply {
  return { chunks: typeof chunks === 'string' ? (chunks.match(/\S+\s*|\s+/g) ?? []) : chunks, ...options };
}

/** A reply calling tools (text optional). */
export function scriptedToolCalls(
  toolCalls: ToolCall[],
  options: Omit<ScriptedReply, 'toolCalls'> = {},
): ScriptedReply {
  return { toolCalls, ...options };
}

/** A failed call: `kind` and `retryable` as the adapters classify a provider's error. */
export function scriptedFailure(
  kind: ModelCallError['kind'],
  retryable: boolean,
  options: { retryAfterMs?: number; message?: string; chunks?: string[] } = {},
): ScriptedReply {
  return {
    ...(options.chunks ? { chunks: options.chunks } : {}),
    error: new ModelCallError({
      kind,
      retryable,
      message: options.message ?? `provider said ${kind}`,
      ...(options.retryAfterMs !== undefined ? { retryAfterMs: options.retryAfterMs } : {}),
    }),
  };
}

function abortedError(signal: AbortSignal): ModelCallError {
  return new ModelCallError({
    kind: 'aborted',
    retryable: false,
    message: 'The model call was aborted',
    cause: signal.reason,
  });
}

/** Resolves when `wait` does; rejects with the aborted error as soon as `signal` fires. */
function untilAborted<T>(wait: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return wait;
  if (signal.aborted) return Promise.reject(abortedError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    wait.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Streams `reply`'s chunks to `onDelta`, checking the signal before each, then returns or throws what it scripts. */
async function play(
  reply: ScriptedReply,
  signal: AbortSignal | undefined,
  onDelta: ((text: string) => void) | undefined,
): Promise<ChatResult> {
  let text = '';
  for (const chunk of reply.chunks ?? []) {
    if (reply.chunkDelayMs) await untilAborted(delay(reply.chunkDelayMs), signal);
    if (typeof chunk === 'function') {
      await untilAborted(chunk(), signal);
      continue;
    }
    if (signal?.aborted) throw abortedError(signal);
    if (chunk === '') continue;
    text += chunk;
    onDelta?.(chunk);
  }
  if (signal?.aborted) throw abortedError(signal);
  if (reply.error !== undefined) throw reply.error;
  return {
    text,
    toolCalls: (reply.toolCalls ?? []).map((call) => ({ ...call, args: { ...call.args } })),
    invalidToolCalls: (reply.invalidToolCalls ?? []).map((call) => ({ ...call })),
    usage: reply.usage ? { ...reply.usage } : null,
  };
}

/** The scripted fake of `ChatModelPort` and `SummarizerPort` (one object serves both). */
export function createScriptedChatModel(options: ScriptedChatModelOptions = {}): ScriptedChatModel {
  const queue = [...(options.replies ?? [])];
  const calls: ScriptedCall[] = [];

  async function answer(call: ScriptedCall, onDelta?: (text: string) => void): Promise<ChatResult> {
    calls.push(call);
    const step = queue.shift() ?? options.fallback;
    if (!step) throw new Error(`scripted chat model: no reply scripted for call ${calls.length} (${call.kind})`);
    if (call.signal?.aborted) throw abortedError(call.signal);
    const reply = typeof step === 'function' ? await step(call) : step;
    return play(reply, call.signal, onDelta);
  }

  return {
    model: options.model ?? 'scripted',
    calls,
    pending: () => queue.length,
    push: (...steps) => {
      queue.push(...steps);
    },
    stream: ({ messages, signal, onDelta, tools, toolChoice, cacheKey }) =>
      answer({ kind: 'chat', messages, tools, toolChoice, cacheKey, signal }, onDelta),
    summarize: ({ messages, signal, tools, toolChoice, cacheKey }) =>
      answer({ kind: 'summary', messages, tools, toolChoice, cacheKey, signal }),
  };
}
