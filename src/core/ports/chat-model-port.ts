import type { OpenAIFunctionTool, PackMessage, ToolCall } from '../context/types';

/** Text deltas, tool calls and usage of one streamed model call. */
export interface ChatResult {
  text: string;
  toolCalls: ToolCall[];
  /** Calls whose arguments were not a JSON object; they are answered with an error like the others. */
  invalidToolCalls?: { id: string; name: string; rawArguments: string; error: string }[];
  /**
   * `cachedTokens`: prompt tokens the provider read from its prompt cache; `cacheWriteTokens`: those it wrote to it
   * (Anthropic); null or absent when it did not say.
   */
  usage: {
    promptTokens: number;
    completionTokens: number;
    cachedTokens?: number | null;
    cacheWriteTokens?: number | null;
  } | null;
}

export interface ChatModelPort {
  readonly model: string;
  /**
   * `tools` are offered to the model (OpenAI function format); absent or empty offers none. `toolChoice: 'none'`
   * keeps them in the request (the prompt's prefix stays the same) but tells the model not to call one.
   * `cacheKey` is sent as `prompt_cache_key` when the adapter is configured to (PROMPT_CACHE_KEY).
   */
  stream(input: {
    messages: PackMessage[];
    signal: AbortSignal;
    onDelta: (text: string) => void;
    tools?: OpenAIFunctionTool[];
    toolChoice?: 'auto' | 'none';
    cacheKey?: string;
  }): Promise<ChatResult>;
}
