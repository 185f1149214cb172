/**
 * Builds the chat and summary models from configuration: Claude through Anthropic's Messages API under
 * CHAT_PROVIDER=anthropic, an OpenAI-compatible endpoint through ChatOpenAI when a key or a base URL is configured,
 * the built-in offline model otherwise.
 */
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatOpenAI } from '@langchain/openai';
import { ANTHROPIC_BASE_URL, AnthropicMessagesModel } from './anthropic-chat-model';
import { nodeHttpFetch } from './node-http-fetch';
import { OFFLINE_MODEL_NAME, OfflineChatModel, type OfflineChatModelOptions } from './offline-chat-model.js';

export interface ChatModelsConfig {
  apiKey?: string;
  /** e.g. `http://localhost:11434/v1`. Default: OpenAI's API. */
  baseUrl?: string;
  /** Default `gpt-4o-mini`. */
  chatModel?: string;
  /** Default: the chat model. */
  summaryModel?: string;
  /** Whether a model accepts `temperature` (the summarizer asks for 0 where it does). Default `modelAcceptsTemperature`. */
  acceptsTemperature?: boolean | ((model: string) => boolean);
  /** Per HTTP request. Default 60,000. */
  timeoutMs?: number;
  /**
   * Output cap of chat calls (the profile's reserve), so a runaway answer stops by tokens, not by the turn timeout.
   * Sent as `max_completion_tokens` to reasoning models (`chatReasoning`), as `max_tokens` otherwise. Default: none.
   */
  chatMaxOutputTokens?: number;
  /** The chat model is a reasoning model (o-series, gpt-5): its cap is `max_completion_tokens`. */
  chatReasoning?: boolean;
  /** Output cap of summarizer calls (folds and condensing), sent like the chat cap. Default: none. */
  summaryMaxOutputTokens?: number;
  /** The summary model is a reasoning model. Default: it rejects `temperature` (`modelAcceptsTemperature`). */
  summaryReasoning?: boolean;
  /** Options of the offline models (e.g. `chunkDelayMs` for a visible stream). */
  offline?: Pick<OfflineChatModelOptions, 'chunkDelayMs' | 'maxSummaryTokens'>;
  /** CHAT_PROVIDER: `anthropic` calls `anthropic`'s endpoint (when it has a key or a base URL). Default `openai`. */
  provider?: 'openai' | 'anthropic';
  /** Anthropic's Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, PROMPT_CACHE_TTL, ANTHROPIC_THINKING_BUDGET_TOKENS). */
  anthropic?: {
    apiKey?: string;
    baseUrl?: string;
    cacheTtl: '5m' | '1h';
    /** Chat calls only: the summarizer asks for a summary, not for thinking. */
    thinkingBudgetTokens?: number;
  };
}

export type ChatModelProvider = 'openai-compatible' | 'anthropic' | 'offline';

/** A model the ports call: a LangChain chat model (OpenAI-compatible, offline) or Claude's Messages API. */
export type ChatModel = BaseChatModel | AnthropicMessagesModel;

/** What is talking: for logs and the UI label. Never contains the key. */
export interface ChatModelLabel {
  provider: ChatModelProvider;
  model: string;
  summaryModel: string;
  baseUrl?: string;
}

export interface ChatModels {
  chat: ChatModel;
  summarizer: ChatModel;
  label: ChatModelLabel;
}

export const DEFAULT_CHAT_MODEL = 'gpt-4o-mini';
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Sent when only a base URL is set: local servers ignore the key, the client insists on one. */
export const PLACEHOLDER_API_KEY = 'sk-no-key-required';
const DEFAULT_TIMEOUT_MS = 60_000;
/** `max_tokens` of Claude calls when no cap is configured (the API requires one). */
const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** gpt-5 and the o-series reject any `temperature` but the default. Provider prefixes ("openai/") are ignored. */
export function modelAcceptsTemperature(model: string): boolean {
  const name = model.split('/').pop()?.toLowerCase() ?? '';
  return !/^(gpt-5|o\d)/.test(name);
}

function acceptsTemperature(config: ChatModelsConfig, model: string): boolean {
  const setting = config.acceptsTemperature ?? modelAcceptsTemperature;
  return typeof setting === 'function' ? setting(model) : setting;
}

/** Names LangChain itself sends `max_completion_tokens` for (its isReasoningModel, which it does not export). */
function langChainTreatsAsReasoning(model: string): boolean {
  return /^o\d/.test(model) || (model.startsWith('gpt-5') && !model.startsWith('gpt-5-chat'));
}

/**
 * The output cap as ChatOpenAI fields. LangChain turns `maxTokens` into `max_completion_tokens` for the bare names
 * it knows as reasoning models (and overwrites that key for them); other names our profile calls reasoning (e.g.
 * `openai/o4-mini` behind a gateway) get the key through `modelKwargs`.
 */
function outputCapFields(
  model: string,
  maxOutputTokens: number | undefined,
  reasoning: boolean,
): { maxTokens?: number; modelKwargs?: Record<string, number> } {
  if (maxOutputTokens === undefined) return {};
  if (!reasoning || langChainTreatsAsReasoning(model)) return { maxTokens: maxOutputTokens };
  return { modelKwargs: { max_completion_tokens: maxOutputTokens } };
}

function createOpenAIModel(options: {
  config: ChatModelsConfig;
  model: string;
  temperature?: number;
  maxOutputTokens?: number;
  reasoning?: boolean;
}): ChatOpenAI {
  const { config, model, temperature } = options;
  return new ChatOpenAI({
    model,
    apiKey: config.apiKey || PLACEHOLDER_API_KEY,
    // node:http on keep-alive agents: less CPU per call than the built-in fetch (node-http-fetch.ts).
    configuration: { baseURL: config.baseUrl || OPENAI_BASE_URL, fetch: nodeHttpFetch },
    // Usage arrives in the stream's last chunk (stream_options.include_usage).
    streamUsage: true,
    // The turn pipeline and the jobs retry with their own bounded backoff.
    maxRetries: 0,
    timeout: config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(temperature !== undefined && { temperature }),
    ...outputCapFields(model, options.maxOutputTokens, options.reasoning ?? false),
  });
}

/**
 * Either the key or the base URL selects the OpenAI-compatible provider (a base URL alone gets
 * `PLACEHOLDER_API_KEY`); with neither, both models are offline (`mode: 'chat'` and
 * `mode: 'summarizer'`). The summarizer asks for temperature 0 only where it is accepted; the
 * chat model keeps the provider's default.
 */
export function createChatModels(config: ChatModelsConfig): ChatModels {
  const chatModel = config.chatModel || DEFAULT_CHAT_MODEL;
  const summaryModel = config.summaryModel || chatModel;
  const anthropic = config.anthropic;
  if (config.provider === 'anthropic' && anthropic && (anthropic.apiKey || anthropic.baseUrl)) {
    const common = {
      ...(anthropic.apiKey ? { apiKey: anthropic.apiKey } : {}),
      ...(anthropic.baseUrl ? { baseUrl: anthropic.baseUrl } : {}),
      timeoutMs: config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      cacheTtl: anthropic.cacheTtl,
    };
    return {
      chat: new AnthropicMessagesModel({
        ...common,
        model: chatModel,
        maxOutputTokens: config.chatMaxOutputTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
        ...(anthropic.thinkingBudgetTokens !== undefined
          ? { thinkingBudgetTokens: anthropic.thinkingBudgetTokens }
          : {}),
      }),
      summarizer: new AnthropicMessagesModel({
        ...common,
        model: summaryModel,
        maxOutputTokens: config.summaryMaxOutputTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
        ...(acceptsTemperature(config, summaryModel) && { temperature: 0 }),
      }),
      label: {
        provider: 'anthropic',
        model: chatModel,
        summaryModel,
        baseUrl: anthropic.baseUrl || ANTHROPIC_BASE_URL,
      },
    };
  }
  if (!config.apiKey && !config.baseUrl) {
    return {
      chat: new OfflineChatModel({ ...config.offline, mode: 'chat' }),
      summarizer: new OfflineChatModel({ ...config.offline, mode: 'summarizer' }),
      label: { provider: 'offline', model: OFFLINE_MODEL_NAME, summaryModel: OFFLINE_MODEL_NAME },
    };
  }
  return {
    chat: createOpenAIModel({
      config,
      model: chatModel,
      reasoning: config.chatReasoning ?? !modelAcceptsTemperature(chatModel),
      ...(config.chatMaxOutputTokens !== undefined ? { maxOutputTokens: config.chatMaxOutputTokens } : {}),
    }),
    summarizer: createOpenAIModel({
      config,
      model: summaryModel,
      reasoning: config.summaryReasoning ?? !modelAcceptsTemperature(summaryModel),
      ...(acceptsTemperature(config, summaryModel) && { temperature: 0 }),
      ...(config.summaryMaxOutputTokens !== undefined ? { maxOutputTokens: config.summaryMaxOutputTokens } : {}),
    }),
    label: {
      provider: 'openai-compatible',
      model: chatModel,
      summaryModel,
      baseUrl: config.baseUrl || OPENAI_BASE_URL,
    },
  };
}
