import type { TokenCounter } from '../../core/context/token-counter';
import type { OpenAIToolCall } from '../openai-facade/completion-response';
import type { ClientToolName } from '../openai-responses/response-tools';

/** Anthropic's usage object: the pack the upstream saw (`input_tokens` leaves out what its cache served). */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** Why an answer ended, as Anthropic says it (we never stop at a client's stop sequence). */
export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use';

/** A content block of an answer. */
export type ContentBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/**
 * Our usage figures in Anthropic's shape: cache reads are the upstream's reported cached tokens; cache writes stay 0
 * (an OpenAI-compatible upstream reports none).
 */
export function anthropicUsage(usage: {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number | null;
  cacheWriteTokens?: number | null;
}): AnthropicUsage {
  const cached = usage.cachedTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  // As Anthropic reports it: input_tokens excludes both the cache reads and the cache writes.
  return {
    input_tokens: Math.max(0, usage.promptTokens - cached - written),
    output_tokens: usage.completionTokens,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: written,
  };
}

/** A client tool call as a `tool_use` block, under the name the client offered it as. */
export function toolUseBlock(
  call: OpenAIToolCall,
  names: ReadonlyMap<string, ClientToolName>,
): ContentBlock & { type: 'tool_use' } {
  const parsed: unknown = JSON.parse(call.function.arguments);
  const input = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  return { type: 'tool_use', id: call.id, name: names.get(call.function.name)?.name ?? call.function.name, input };
}

/** The answer's blocks: its text (when it has some, or nothing else), then its client tool calls. */
export function contentOf(
  text: string,
  toolCalls: readonly OpenAIToolCall[],
  names: ReadonlyMap<string, ClientToolName>,
): ContentBlock[] {
  const blocks: ContentBlock[] = text !== '' || toolCalls.length === 0 ? [{ type: 'text', text }] : [];
  return [...blocks, ...toolCalls.map((call) => toolUseBlock(call, names))];
}

/** The message object of an answer, as `messages.create` returns it and `message_start` opens it. */
export function messageObject(input: {
  id: string;
  model: string;
  content: ContentBlock[];
  stopReason: StopReason | null;
  usage: AnthropicUsage;
}): Record<string, unknown> {
  return {
    id: input.id,
    type: 'message',
    role: 'assistant',
    model: input.model,
    content: input.content,
    stop_reason: input.stopReason,
    stop_sequence: null,
    usage: input.usage,
  };
}

/**
 * The answer's text as the client may receive it under `max_tokens` (by our counter): each piece passes whole while
 * it fits, the piece that crosses the cap is cut where it still fits, and nothing passes after it.
 */
export class TextCap {
  private used = 0;
  private cut = false;

  constructor(
    private readonly maxTokens: number,
    private readonly counter: Pick<TokenCounter, 'countText'>,
  ) {}

  /** True once a piece did not fit whole. */
  get reached(): boolean {
    return this.cut;
  }

  /** What of `text` passes ('' once the cap is reached). */
  take(text: string): string {
    if (this.cut) return '';
    const tokens = this.counter.countText(text);
    if (this.used + tokens <= this.maxTokens) {
      this.used += tokens;
      return text;
    }
    this.cut = true;
    // The longest start of the piece that still fits (a binary search: a few counts of one piece).
    let [low, high] = [0, text.length];
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (this.used + this.counter.countText(text.slice(0, middle)) <= this.maxTokens) low = middle;
      else high = middle - 1;
    }
    this.used = this.maxTokens;
    return text.slice(0, low);
  }
}
