/**
 * Claude through Anthropic's Messages API, on the official SDK. Not LangChain's ChatAnthropic: its converter rebuilds the
 * request from LangChain messages (it merges tool results and user text, formats content its own way), so where the
 * prompt cache's breakpoints land and which blocks stay apart would be its decision, not the tested mapping's
 * (anthropic-messages-request.ts: what that function returns is what is sent). The ports (model-ports.ts) call
 * `stream` the way they call streamChat for LangChain models, and get the same result shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { randomUUID } from 'node:crypto';
import type { OpenAIFunctionTool, PackMessage } from '../core/context/types.js';
import { toAnthropicRequest, type ThinkingBlocks } from './anthropic-messages-request.js';
import { nodeHttpFetch } from './node-http-fetch.js';
import { emitDelta, endedBeforeFinish, streamFailure, type StreamChatResult } from './stream-chat.js';
import { assembleToolCalls, type ModelUsage, type ToolCallDelta } from './to-langchain-messages.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
/** Sent when only a base URL is set (a gateway or a stub that ignores it). */
export const ANTHROPIC_PLACEHOLDER_KEY = 'sk-ant-no-key-required';
/** Tool loops whose thinking blocks are kept for their next round, per process (oldest dropped first). */
const THINKING_KEPT = 1000;

export interface AnthropicMessagesModelOptions {
  model: string;
  apiKey?: string;
  /** Default Anthropic's API; the SDK appends `/v1/messages`. */
  baseUrl?: string;
  /** `max_tokens` of every call. */
  maxOutputTokens: number;
  timeoutMs: number;
  cacheTtl: '5m' | '1h';
  /** Extended thinking's `budget_tokens` (chat calls); absent: off. */
  thinkingBudgetTokens?: number;
  temperature?: number;
}

/** What one call gets: the same inputs streamChat takes. */
export interface AnthropicStreamInput {
  messages: PackMessage[];
  tools?: readonly OpenAIFunctionTool[];
  toolChoice?: 'auto' | 'none';
  signal?: AbortSignal;
  onDelta?: (text: string) => void;
}

const FINISH_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  refusal: 'content_filter',
};

interface StreamState {
  text: string;
  deltas: ToolCallDelta[];
  thinking: Map<
    number,
    { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string }
  >;
  usage: { input: number; write: number; read: number; output: number } | null;
  stopReason: string | null;
}

/** Usage as the engine counts it: Anthropic's `input_tokens` leaves out the cache's reads and writes. */
function toModelUsage(usage: NonNullable<StreamState['usage']>): ModelUsage {
  return {
    promptTokens: usage.input + usage.write + usage.read,
    completionTokens: usage.output,
    cachedTokens: usage.read,
    cacheWriteTokens: usage.write,
  };
}

function readUsage(
  state: StreamState,
  usage: {
    input_tokens?: number | null;
    cache_creation_input_tokens?: number | null;
    cache_read_input_tokens?: number | null;
    output_tokens?: number | null;
  },
): void {
  const previous = state.usage ?? { input: 0, write: 0, read: 0, output: 0 };
  state.usage = {
    input: usage.input_tokens ?? previous.input,
    write: usage.cache_creation_input_tokens ?? previous.write,
    read: usage.cache_read_input_tokens ?? previous.read,
    output: usage.output_tokens ?? previous.output,
  };
}

function onEvent(state: StreamState, event: RawMessageStreamEvent, onDelta?: (text: string) => void): void {
  switch (event.type) {
    case 'message_start':
      readUsage(state, event.message.usage);
      return;
    case 'content_block_start': {
      const block = event.content_block;
      if (block.type === 'tool_use')
        state.deltas.push({ index: event.index, id: block.id, name: block.name, argumentsDelta: '' });
      else if (block.type === 'thinking')
        state.thinking.set(event.index, { type: 'thinking', thinking: block.thinking, signature: block.signature });
      else if (block.type === 'redacted_thinking')
        state.thinking.set(event.index, { type: 'redacted_thinking', data: block.data });
      else if (block.type === 'text' && block.text !== '') appendText(state, block.text, onDelta);
      return;
    }
    case 'content_block_delta': {
      const delta = event.delta;
      if (delta.type === 'text_delta') appendText(state, delta.text, onDelta);
      else if (delta.type === 'input_json_delta')
        state.deltas.push({ index: event.index, argumentsDelta: delta.partial_json });
      else if (delta.type === 'thinking_delta' || delta.type === 'signature_delta') {
        const block = state.thinking.get(event.index);
        if (block?.type === 'thinking') {
          if (delta.type === 'thinking_delta') block.thinking += delta.thinking;
          else block.signature += delta.signature;
        }
      }
      return;
    }
    case 'message_delta':
      readUsage(state, event.usage);
      state.stopReason = event.delta.stop_reason ?? state.stopReason;
      return;
    default:
      return;
  }
}

function appendText(state: StreamState, text: string, onDelta?: (text: string) => void): void {
  if (text === '') return;
  state.text += text;
  emitDelta(onDelta, text);
}

/**
 * One Claude model (chat or summarizer). `stream` sends the pack as toAnthropicRequest maps it and streams the answer;
 * the SDK retries nothing (maxRetries 0: the turn and the jobs retry with their own backoff).
 */
export class AnthropicMessagesModel {
  readonly model: string;
  private readonly client: Anthropic;
  /** This process's tool loops' thinking blocks, by the first tool call's id of the answer that returned them. */
  private readonly thinking = new Map<string, ThinkingBlocks>();

  constructor(private readonly options: AnthropicMessagesModelOptions) {
    this.model = options.model;
    this.client = new Anthropic({
      apiKey: options.apiKey || ANTHROPIC_PLACEHOLDER_KEY,
      baseURL: options.baseUrl || ANTHROPIC_BASE_URL,
      // node:http on keep-alive agents, as the OpenAI client (node-http-fetch.ts).
      fetch: nodeHttpFetch,
      maxRetries: 0,
      timeout: options.timeoutMs,
    });
  }

  /** The request a call sends (exposed for tests and the breakpoint figures). */
  request(input: Pick<AnthropicStreamInput, 'messages' | 'tools' | 'toolChoice'>) {
    return toAnthropicRequest(input.messages, {
      model: this.options.model,
      maxTokens: this.options.maxOutputTokens,
      cacheTtl: this.options.cacheTtl,
      ...(input.tools && input.tools.length > 0 ? { tools: input.tools } : {}),
      ...(input.toolChoice ? { toolChoice: input.toolChoice } : {}),
      ...(this.options.temperature !== undefined ? { temperature: this.options.temperature } : {}),
      ...(this.options.thinkingBudgetTokens !== undefined
        ? { thinkingBudgetTokens: this.options.thinkingBudgetTokens, thinkingOf: (id: string) => this.thinking.get(id) }
        : {}),
    });
  }

  /** Streams one call; failures are thrown as `ModelCallError` like streamChat's. */
  async stream(input: AnthropicStreamInput): Promise<StreamChatResult> {
    const { signal } = input;
    const state: StreamState = { text: '', deltas: [], thinking: new Map(), usage: null, stopReason: null };
    try {
      const events = await this.client.messages.create(
        { ...this.request(input), stream: true },
        signal ? { signal } : {},
      );
      for await (const event of events) onEvent(state, event, input.onDelta);
      signal?.throwIfAborted();
    } catch (error) {
      throw streamFailure(error, signal, state.text);
    }
    if (state.stopReason === null) throw endedBeforeFinish(state.text);
    const toolCalls = assembleToolCalls(state.deltas, () => `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`);
    this.keepThinking(state, toolCalls.valid[0]?.id ?? toolCalls.invalid[0]?.id);
    return {
      text: state.text,
      toolCalls: toolCalls.valid,
      invalidToolCalls: toolCalls.invalid,
      usage: state.usage ? toModelUsage(state.usage) : null,
      finishReason: FINISH_REASONS[state.stopReason] ?? state.stopReason,
    };
  }

  /** An answer that called tools keeps its thinking blocks for the loop's next round (they must go back unchanged). */
  private keepThinking(state: StreamState, firstCallId: string | undefined): void {
    if (firstCallId === undefined || state.thinking.size === 0) return;
    const blocks = [...state.thinking.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
    this.thinking.set(firstCallId, blocks);
    while (this.thinking.size > THINKING_KEPT) this.thinking.delete(this.thinking.keys().next().value!);
  }
}
