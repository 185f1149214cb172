/**
 * One streamed model call: pack messages in, text deltas out as they arrive, and the complete
 * answer (text, tool calls, usage, finish reason) as plain domain values at the end.
 */
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { randomUUID } from 'node:crypto';
import type { PackMessage, ToolCall } from '../core/context/types.js';
import { classifyProviderError, ModelCallError } from './classify-provider-error.js';
import type { OpenAIToolDefinition } from './count-chat-tokens.js';
import {
  assembleToolCalls,
  fromAIMessageChunk,
  toLangChainMessages,
  type InvalidToolCall,
  type ModelUsage,
  type ToolCallDelta,
} from './to-langchain-messages.js';

export interface StreamChatOptions {
  /** A model from `createChatModels` (ChatOpenAI or the offline model). */
  model: BaseChatModel;
  messages: PackMessage[];
  /** Offered to the model (`bindTools`, cached per model and list: pass the same array while the tools are the same), in OpenAI's function format. */
  tools?: readonly OpenAIToolDefinition[];
  /** Aborts the HTTP request and the stream; the call then fails with kind `aborted`. */
  signal?: AbortSignal;
  /** Each non-empty text delta, in order. An error it throws ends the call and is rethrown as is. */
  onDelta?: (text: string) => void;
  /** `none`: the tools stay in the request (same prompt prefix) but the model must not call one. */
  toolChoice?: 'auto' | 'none';
  /** Sent as `prompt_cache_key` (ChatOpenAI's `promptCacheKey` call option; other models ignore it). */
  promptCacheKey?: string;
  /** LangChain run tags (e.g. `['summary']`), so callbacks and tracers can tell calls apart. */
  callTags?: string[];
  /** LangChain run metadata (e.g. `{ threadId }`). */
  callMetadata?: Record<string, unknown>;
}

export interface StreamChatResult {
  text: string;
  toolCalls: ToolCall[];
  /** Calls whose arguments were not a JSON object: answer them too (with an error tool message). */
  invalidToolCalls: InvalidToolCall[];
  /** As the provider reported it; null when it reported none. */
  usage: ModelUsage | null;
  /** `stop`, `tool_calls`, `length`, `content_filter`, ... */
  finishReason: string;
}

/** Marks an error thrown by the caller's `onDelta`, so it is not mistaken for a provider error. */
class DeltaHandlerError extends Error {
  constructor(readonly original: unknown) {
    super('onDelta failed');
  }
}

/** Hands a text delta to the caller; what its handler throws is told apart from provider errors (see streamFailure). */
export function emitDelta(onDelta: ((text: string) => void) | undefined, text: string): void {
  try {
    onDelta?.(text);
  } catch (error) {
    throw new DeltaHandlerError(error);
  }
}

/** What a failed stream throws: the caller's own `onDelta` error as it was, anything else classified. */
export function streamFailure(error: unknown, signal: AbortSignal | undefined, partialText: string): unknown {
  if (error instanceof DeltaHandlerError) return error.original;
  return new ModelCallError({
    classification: classifyProviderError(error, signal ? { signal } : {}),
    cause: error,
    partialText,
  });
}

/** A stream that ended without a finish reason: cut (`network`, retryable). */
export function endedBeforeFinish(partialText: string): ModelCallError {
  return new ModelCallError({
    classification: {
      kind: 'network',
      retryable: true,
      message: 'The model stream ended before the model finished its answer',
    },
    cause: null,
    partialText,
  });
}

/**
 * Streams one call. Failures are thrown as `ModelCallError` (classified, with the text streamed
 * so far in `partialText`); a stream that ends without a finish reason counts as cut (`network`).
 */
export async function streamChat(options: StreamChatOptions): Promise<StreamChatResult> {
  const { model, signal } = options;
  const runnable = options.tools && options.tools.length > 0 ? bindTools(model, options.tools) : model;
  let text = '';
  const toolCallDeltas: ToolCallDelta[] = [];
  let usage: ModelUsage | null = null;
  let finishReason: string | null = null;
  try {
    const stream = await runnable.stream(toLangChainMessages(options.messages), {
      ...(signal && { signal }),
      ...(options.callTags && { tags: options.callTags }),
      ...(options.callMetadata && { metadata: options.callMetadata }),
      ...(options.toolChoice && options.tools && options.tools.length > 0 && { tool_choice: options.toolChoice }),
      ...(options.promptCacheKey && { promptCacheKey: options.promptCacheKey }),
    } as Parameters<BaseChatModel['stream']>[1]);
    for await (const chunk of stream) {
      const content = fromAIMessageChunk(chunk);
      if (content.text.length > 0) {
        text += content.text;
        emitDelta(options.onDelta, content.text);
      }
      toolCallDeltas.push(...content.toolCallDeltas);
      usage = content.usage ?? usage;
      finishReason = content.finishReason ?? finishReason;
    }
    signal?.throwIfAborted();
  } catch (error) {
    throw streamFailure(error, signal, text);
  }
  if (finishReason === null) throw endedBeforeFinish(text);
  const toolCalls = assembleToolCalls(toolCallDeltas, () => `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`);
  return { text, toolCalls: toolCalls.valid, invalidToolCalls: toolCalls.invalid, usage, finishReason };
}

type BoundModel = ReturnType<NonNullable<BaseChatModel['bindTools']>>;

/**
 * Bound models by model and tools list. ChatOpenAI's `bindTools` converts every tool and builds a new ChatOpenAI,
 * whose OpenAI client is then created on its first call: about 0.25 ms of CPU per call with five tools. The tool
 * registry hands out the same array until its tools change, so the list's identity is the key (a list must not be
 * changed after it was offered); a new list or a collected model drops its entries.
 */
const boundModels = new WeakMap<BaseChatModel, WeakMap<readonly OpenAIToolDefinition[], BoundModel>>();

/**
 * Models bound to a tool list since the process started (each a new ChatOpenAI and, on its first call, a new OpenAI
 * client): the per-turn work-budget test holds it at 0 per turn once warm, so a tool list built afresh per call
 * fails CI instead of costing every turn (bench/README.md, "Sixth pass").
 */
export const chatModelWork = { bindings: 0 };

function bindTools(model: BaseChatModel, tools: readonly OpenAIToolDefinition[]): BoundModel {
  if (!model.bindTools) throw new Error(`Model ${model.getName()} does not support tools`);
  let byTools = boundModels.get(model);
  if (!byTools) {
    byTools = new WeakMap();
    boundModels.set(model, byTools);
  }
  let bound = byTools.get(tools);
  if (!bound) {
    bound = model.bindTools([...tools]);
    chatModelWork.bindings += 1;
    byTools.set(tools, bound);
  }
  return bound;
}
