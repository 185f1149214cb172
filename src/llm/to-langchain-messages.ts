/**
 * The boundary between domain messages and LangChain's: `PackMessage[]` in, plain domain values
 * out. LangChain objects stay inside src/llm.
 */
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type AIMessageChunk,
  type BaseMessage,
} from '@langchain/core/messages';
import type { PackMessage, ToolCall } from '../core/context/types.js';
import { TRANSCRIPT_SEQ_KEY } from './offline-recall-answer.js';

/** Token usage a provider reported for one call. */
export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's prompt cache (LangChain's `input_token_details.cache_read`); null when not reported. */
  cachedTokens: number | null;
  /** Prompt tokens the provider wrote to its prompt cache (Anthropic's `cache_creation_input_tokens`); absent when not reported. */
  cacheWriteTokens?: number | null;
}

/** A fragment of a streamed tool call; fragments with the same `index` belong together. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  argumentsDelta: string;
}

/** What one streamed chunk carries, as plain values. */
export interface ChunkContent {
  text: string;
  toolCallDeltas: ToolCallDelta[];
  usage: ModelUsage | null;
  /** Set on the chunk that ends the answer: `stop`, `tool_calls`, `length`, ... */
  finishReason: string | null;
}

/** A tool call whose arguments were not valid JSON; it must still be answered. */
export interface InvalidToolCall {
  id: string;
  name: string;
  rawArguments: string;
  error: string;
}

/** Converts one pack message. Throws on a tool message without `toolCallId` (a caller bug). */
export function toLangChainMessage(message: PackMessage): BaseMessage {
  // A transcript message's seq rides along for the offline model (it quotes messages by seq); the OpenAI
  // converters never send additional_kwargs keys other than their own.
  const additional_kwargs = message.seq !== undefined ? { [TRANSCRIPT_SEQ_KEY]: message.seq } : {};
  switch (message.role) {
    case 'system':
      return new SystemMessage(message.content);
    case 'user':
      return new HumanMessage({ content: message.content, additional_kwargs });
    case 'assistant':
      return new AIMessage({
        content: message.content,
        additional_kwargs,
        tool_calls: (message.toolCalls ?? []).map((call) => ({
          id: call.id,
          name: call.name,
          args: call.args,
          type: 'tool_call' as const,
        })),
      });
    case 'tool':
      if (!message.toolCallId) throw new Error(`Tool message (seq ${message.seq ?? '?'}) has no toolCallId`);
      return new ToolMessage({ content: message.content, tool_call_id: message.toolCallId, additional_kwargs });
  }
}

/** Converts a context pack, order preserved. */
export function toLangChainMessages(messages: PackMessage[]): BaseMessage[] {
  return messages.map(toLangChainMessage);
}

function chunkText(chunk: AIMessageChunk): string {
  if (typeof chunk.content === 'string') return chunk.content;
  return chunk.content
    .map((part) =>
      typeof part === 'string' ? part : part.type === 'text' && typeof part.text === 'string' ? part.text : '',
    )
    .join('');
}

/** Reads a streamed chunk into plain values: text delta, tool call fragments, usage, finish reason. */
export function fromAIMessageChunk(chunk: AIMessageChunk): ChunkContent {
  const usage = chunk.usage_metadata;
  const finishReason = chunk.response_metadata?.finish_reason;
  return {
    text: chunkText(chunk),
    toolCallDeltas: (chunk.tool_call_chunks ?? []).map((delta, position) => ({
      index: delta.index ?? position,
      ...(delta.id && { id: delta.id }),
      ...(delta.name && { name: delta.name }),
      argumentsDelta: delta.args ?? '',
    })),
    usage: usage
      ? {
          promptTokens: usage.input_tokens,
          completionTokens: usage.output_tokens,
          cachedTokens: usage.input_token_details?.cache_read ?? null,
        }
      : null,
    finishReason: typeof finishReason === 'string' ? finishReason : null,
  };
}

/**
 * Assembles streamed tool call fragments into domain tool calls. A call whose arguments are not a
 * JSON object lands in `invalid`. A call without an id (some local servers) gets a generated one.
 */
export function assembleToolCalls(
  deltas: ToolCallDelta[],
  createId: () => string,
): { valid: ToolCall[]; invalid: InvalidToolCall[] } {
  const byIndex = new Map<number, { id?: string; name: string; arguments: string }>();
  for (const delta of deltas) {
    const call = byIndex.get(delta.index) ?? { name: '', arguments: '' };
    if (delta.id) call.id ??= delta.id;
    if (delta.name) call.name += delta.name;
    call.arguments += delta.argumentsDelta;
    byIndex.set(delta.index, call);
  }
  const valid: ToolCall[] = [];
  const invalid: InvalidToolCall[] = [];
  for (const index of [...byIndex.keys()].sort((a, b) => a - b)) {
    const call = byIndex.get(index)!;
    const id = call.id ?? createId();
    const parsed = parseArguments(call.arguments);
    if (parsed.ok) valid.push({ id, name: call.name, args: parsed.args });
    else invalid.push({ id, name: call.name, rawArguments: call.arguments, error: parsed.error });
  }
  return { valid, invalid };
}

function parseArguments(raw: string): { ok: true; args: Record<string, unknown> } | { ok: false; error: string } {
  if (raw.trim() === '') return { ok: true, args: {} };
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return { ok: true, args: value as Record<string, unknown> };
    return { ok: false, error: 'Tool call arguments are not a JSON object' };
  } catch (error) {
    return { ok: false, error: `Tool call arguments are not valid JSON: ${(error as Error).message}` };
  }
}
