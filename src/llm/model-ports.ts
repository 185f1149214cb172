import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ModelCallError as CoreModelCallError } from '../core/errors/model-call-error';
import type { ChatModelPort, ChatResult, SummarizerPort } from '../core/ports';
import { createHash } from 'node:crypto';
import { AnthropicMessagesModel } from './anthropic-chat-model';
import { ModelCallError } from './classify-provider-error';
import { streamChat } from './stream-chat';

/** Rethrows the llm layer's classified error as the core's. */
function toCoreError(error: unknown): unknown {
  if (error instanceof ModelCallError) {
    return new CoreModelCallError({
      kind: error.kind,
      message: error.message,
      retryable: error.retryable,
      cause: error,
      ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    });
  }
  return error;
}

function toChatResult(result: Awaited<ReturnType<typeof streamChat>>): ChatResult {
  return {
    text: result.text,
    toolCalls: result.toolCalls,
    invalidToolCalls: result.invalidToolCalls,
    usage: result.usage
      ? {
          promptTokens: result.usage.promptTokens,
          completionTokens: result.usage.completionTokens,
          cachedTokens: result.usage.cachedTokens,
          ...(result.usage.cacheWriteTokens !== undefined ? { cacheWriteTokens: result.usage.cacheWriteTokens } : {}),
        }
      : null,
  };
}

/** The `prompt_cache_key` of a thread: a hash of its id (stable, and no id leaves for the provider). */
export function promptCacheKeyOf(threadId: string): string {
  return createHash('sha256').update(`thread:${threadId}`).digest('hex').slice(0, 32);
}

/** Whether PROMPT_CACHE_KEY sends `prompt_cache_key`: `auto` only to OpenAI's own API (others may refuse unknown fields). */
export function sendsPromptCacheKey(
  mode: 'auto' | 'on' | 'off',
  endpoint: { provider: string; baseUrl?: string | undefined },
): boolean {
  if (mode !== 'auto' || endpoint.provider === 'offline') return mode === 'on' && endpoint.provider !== 'offline';
  if (!endpoint.baseUrl) return true;
  try {
    return new URL(endpoint.baseUrl).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

/**
 * The core's chat port over a LangChain chat model (ChatOpenAI or the offline model). `promptCacheKey`: whether a
 * call's `cacheKey` is sent as `prompt_cache_key` (PROMPT_CACHE_KEY; default false).
 */
export function createChatPort(
  model: BaseChatModel | AnthropicMessagesModel,
  modelName: string,
  options: { promptCacheKey?: boolean } = {},
): ChatModelPort {
  return {
    model: modelName,
    async stream({ messages, signal, onDelta, tools, toolChoice, cacheKey }) {
      try {
        if (model instanceof AnthropicMessagesModel)
          return toChatResult(
            await model.stream({
              messages,
              signal,
              onDelta,
              ...(tools ? { tools } : {}),
              ...(toolChoice ? { toolChoice } : {}),
            }),
          );
        return toChatResult(
          await streamChat({
            model,
            messages,
            signal,
            onDelta,
            callTags: ['chat'],
            ...(tools && tools.length > 0 ? { tools } : {}),
            ...(toolChoice ? { toolChoice } : {}),
            ...(cacheKey && options.promptCacheKey ? { promptCacheKey: promptCacheKeyOf(cacheKey) } : {}),
          }),
        );
      } catch (error) {
        throw toCoreError(error);
      }
    },
  };
}

/**
 * The summarizer port. Its calls are tagged `summary` and no delta handler is attached, so summarizer
 * tokens never reach a user's stream.
 */
export function createSummarizerPort(
  model: BaseChatModel | AnthropicMessagesModel,
  modelName: string,
  options: { promptCacheKey?: boolean } = {},
): SummarizerPort {
  return {
    model: modelName,
    async summarize({ messages, signal, tools, toolChoice, cacheKey }) {
      try {
        if (model instanceof AnthropicMessagesModel)
          return toChatResult(
            await model.stream({
              messages,
              ...(signal ? { signal } : {}),
              ...(tools ? { tools } : {}),
              ...(toolChoice ? { toolChoice } : {}),
            }),
          );
        return toChatResult(
          await streamChat({
            model,
            messages,
            ...(signal ? { signal } : {}),
            callTags: ['summary'],
            ...(tools && tools.length > 0 ? { tools } : {}),
            ...(toolChoice ? { toolChoice } : {}),
            ...(cacheKey && options.promptCacheKey ? { promptCacheKey: promptCacheKeyOf(cacheKey) } : {}),
          }),
        );
      } catch (error) {
        throw toCoreError(error);
      }
    },
  };
}
