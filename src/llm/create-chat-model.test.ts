import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { replyWithError, startOpenAIStub, type OpenAIStub } from '../../test/support/openai-stub.js';
import type { PackMessage } from '../core/context/types.js';
import {
  createChatModels,
  modelAcceptsTemperature,
  OPENAI_BASE_URL,
  PLACEHOLDER_API_KEY,
} from './create-chat-model.js';
import { AnthropicMessagesModel } from './anthropic-chat-model.js';
import { OfflineChatModel } from './offline-chat-model.js';
import { streamChat } from './stream-chat.js';

let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub();
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

const pack: PackMessage[] = [{ role: 'user', content: 'hello', tokens: 0 }];

describe('createChatModels', () => {
  it('selects Claude under CHAT_PROVIDER=anthropic: thinking on the chat only, temperature 0 and its own cap on the summarizer', () => {
    const models = createChatModels({
      provider: 'anthropic',
      anthropic: { apiKey: 'sk-ant-test', cacheTtl: '1h', thinkingBudgetTokens: 2048 },
      apiKey: 'sk-openai-ignored',
      chatModel: 'claude-sonnet-4-5',
      chatMaxOutputTokens: 4096,
      summaryMaxOutputTokens: 800,
    });
    expect(models.chat).toBeInstanceOf(AnthropicMessagesModel);
    expect(models.label).toEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      summaryModel: 'claude-sonnet-4-5',
      baseUrl: 'https://api.anthropic.com',
    });
    const chat = (models.chat as AnthropicMessagesModel).request({ messages: [{ ...pack[0]!, seq: 1 }] });
    expect(chat).toMatchObject({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(chat.temperature).toBeUndefined();
    expect(chat.messages[0]?.content).toEqual([
      { type: 'text', text: 'hello', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ]);
    const summary = (models.summarizer as AnthropicMessagesModel).request({ messages: pack });
    expect(summary).toMatchObject({ max_tokens: 800, temperature: 0 });
    expect(summary.thinking).toBeUndefined();
    // Without an Anthropic endpoint the provider setting has nothing to call: the OpenAI settings (or offline) apply.
    expect(createChatModels({ provider: 'anthropic', anthropic: { cacheTtl: '5m' } }).label.provider).toBe('offline');
  });

  it('selects ChatOpenAI on OpenAI with a key only', () => {
    const models = createChatModels({ apiKey: 'sk-test' });
    expect(models.chat).toBeInstanceOf(ChatOpenAI);
    expect(models.summarizer).toBeInstanceOf(ChatOpenAI);
    const chat = models.chat as ChatOpenAI;
    expect(chat.apiKey).toBe('sk-test');
    expect(chat.clientConfig.baseURL).toBe(OPENAI_BASE_URL);
    expect(chat.model).toBe('gpt-4o-mini');
    expect(chat.streamUsage).toBe(true);
    expect(models.label).toEqual({
      provider: 'openai-compatible',
      model: 'gpt-4o-mini',
      summaryModel: 'gpt-4o-mini',
      baseUrl: OPENAI_BASE_URL,
    });
    expect(JSON.stringify(models.label)).not.toContain('sk-test');
  });

  it('selects ChatOpenAI with a placeholder key for a base URL only, and talks to it', async () => {
    const models = createChatModels({ baseUrl: stub.url, chatModel: 'qwen2.5:7b' });
    expect(models.label).toEqual({
      provider: 'openai-compatible',
      model: 'qwen2.5:7b',
      summaryModel: 'qwen2.5:7b',
      baseUrl: stub.url,
    });
    const result = await streamChat({ model: models.chat as BaseChatModel, messages: pack });
    expect(result.text).toBe('stub reply to: hello');
    expect(result.usage).not.toBeNull();
    expect(stub.requests[0]).toMatchObject({ apiKey: PLACEHOLDER_API_KEY, body: { model: 'qwen2.5:7b' } });
  });

  it('selects the offline models with neither key nor base URL', () => {
    const models = createChatModels({});
    expect(models.chat).toBeInstanceOf(OfflineChatModel);
    expect((models.chat as OfflineChatModel).mode).toBe('chat');
    expect((models.summarizer as OfflineChatModel).mode).toBe('summarizer');
    expect(models.label).toEqual({ provider: 'offline', model: 'offline', summaryModel: 'offline' });
    expect((models.chat as BaseChatModel)._llmType()).toBe('offline');
  });

  it('asks the summarizer for temperature 0 only where accepted; the chat model sends none', async () => {
    const accepted = createChatModels({ baseUrl: stub.url, chatModel: 'gpt-4o-mini', summaryModel: 'gpt-4.1-mini' });
    await streamChat({ model: accepted.chat as BaseChatModel, messages: pack });
    await streamChat({ model: accepted.summarizer as BaseChatModel, messages: pack });
    const rejected = createChatModels({ baseUrl: stub.url, summaryModel: 'gpt-5-mini' });
    await streamChat({ model: rejected.summarizer as BaseChatModel, messages: pack });
    const [chat, summary, reasoning] = stub.requests;
    expect(chat!.body.temperature).toBeUndefined();
    expect(summary!.body).toMatchObject({ model: 'gpt-4.1-mini', temperature: 0 });
    expect(reasoning!.body.model).toBe('gpt-5-mini');
    expect(reasoning!.body.temperature).toBeUndefined();
  });

  it('lets the config decide which models accept temperature', async () => {
    const never = createChatModels({ baseUrl: stub.url, acceptsTemperature: false });
    await streamChat({ model: never.summarizer as BaseChatModel, messages: pack });
    const byName = createChatModels({
      baseUrl: stub.url,
      summaryModel: 'local-model',
      acceptsTemperature: (model) => model === 'local-model',
    });
    await streamChat({ model: byName.summarizer as BaseChatModel, messages: pack });
    expect(stub.requests[0]!.body.temperature).toBeUndefined();
    expect(stub.requests[1]!.body.temperature).toBe(0);
  });

  it('leaves retries to the caller and applies the timeout', async () => {
    stub.setResponder(() => replyWithError(503));
    const models = createChatModels({ baseUrl: stub.url, timeoutMs: 1234 });
    await expect(streamChat({ model: models.chat as BaseChatModel, messages: pack })).rejects.toMatchObject({
      kind: 'server',
    });
    expect(stub.requests).toHaveLength(1);
    expect((models.chat as ChatOpenAI).timeout).toBe(1234);
  });

  it('knows which models reject temperature', () => {
    expect(['gpt-5', 'gpt-5-mini', 'o1', 'o3-mini', 'o4-mini', 'openai/gpt-5'].map(modelAcceptsTemperature)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(['gpt-4o-mini', 'gpt-4.1', 'llama3.1:8b', 'qwen2.5', 'omni-model'].map(modelAcceptsTemperature)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
  });
});
