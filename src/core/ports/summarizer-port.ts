import type { OpenAIFunctionTool, PackMessage } from '../context/types';
import type { ChatResult } from './chat-model-port';

export interface SummarizerPort {
  readonly model: string;
  /**
   * A fold that continues the chat's prompt (see continued-fold-prompt.ts) sends the chat's `tools` with
   * `toolChoice: 'none'`, and the thread's `cacheKey` (sent as `prompt_cache_key` when configured), so the prompt
   * reaches the cache the thread's chat calls filled.
   */
  summarize(input: {
    messages: PackMessage[];
    signal?: AbortSignal;
    tools?: OpenAIFunctionTool[];
    toolChoice?: 'none';
    cacheKey?: string;
  }): Promise<ChatResult>;
}
