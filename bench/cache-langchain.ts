import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import {
  anthropicPromptCachingMiddleware,
  createAgent,
  HumanMessage,
  summarizationMiddleware,
  type BaseMessage,
} from 'langchain';
import { createTokenCounter, type TokenCounter } from '../src/core/context';
import type { Role } from '../src/core/context/types';

const ROLES: Record<string, Role> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool' };

/** One chat through LangChain.js: `send` runs one agent turn on the messages carried so far. */
export interface LangChainChat {
  send(text: string): Promise<void>;
}

/**
 * LangChain.js' `createAgent` with `summarizationMiddleware`: no tools, trigger and keep as given, the summarizer the
 * same model, and tokens counted by our exact counter (so it triggers where we would). Shared by the benches' peers.
 */
export function createSummarizingAgent(options: {
  settings: ConstructorParameters<typeof ChatOpenAI>[0];
  systemPrompt: string;
  triggerTokens: number;
  keepMessages: number;
  counter: TokenCounter;
}) {
  const countTokens = exactCount(options.counter);
  return createAgent({
    model: new ChatOpenAI(options.settings),
    tools: [],
    systemPrompt: options.systemPrompt,
    middleware: [
      summarizationMiddleware({
        model: new ChatOpenAI(options.settings),
        trigger: { tokens: options.triggerTokens },
        keep: { messages: options.keepMessages },
        tokenCounter: countTokens,
      }),
    ],
  });
}

/**
 * bench:cache's peer: LangChain.js' `createAgent` with `summarizationMiddleware` (trigger and keep as given, the
 * summarizer pointed at the same stub), the chat's state carried in memory between turns. Not streaming (LangChain's
 * streaming `invoke` estimates usage with tiktoken ranks fetched from the network). The same exact token counter as
 * ours, so both trigger at the same point. Type-checked on its own (bench/tsconfig.peer.json).
 */
export function createLangChainChat(options: {
  stubUrl: string;
  model: string;
  systemPrompt: string;
  triggerTokens: number;
  keepMessages: number;
}): LangChainChat {
  const agent = createSummarizingAgent({
    settings: { model: options.model, apiKey: 'bench-key', configuration: { baseURL: options.stubUrl }, maxRetries: 0 },
    systemPrompt: options.systemPrompt,
    triggerTokens: options.triggerTokens,
    keepMessages: options.keepMessages,
    counter: createTokenCounter('o200k_base'),
  });
  let messages: BaseMessage[] = [];
  return {
    async send(text) {
      const result = await agent.invoke({ messages: [...messages, new HumanMessage(text)] });
      messages = result.messages;
    },
  };
}

/** The token count LangChain's summarization middleware triggers on: our exact counter, as for ours. */
function exactCount(counter: TokenCounter) {
  return (messages: BaseMessage[]) =>
    messages.reduce(
      (sum, message) => sum + counter.countMessage({ role: ROLES[message.getType()] ?? 'user', content: message.text }),
      3,
    );
}

/**
 * bench:cache's Anthropic peer (BENCH_CACHE_PROVIDER=anthropic): `createAgent` on `ChatAnthropic` with
 * `summarizationMiddleware` (trigger and keep as given, the summarizer the same model) and LangChain's
 * `anthropicPromptCachingMiddleware` (a top-level `cache_control`: Anthropic's automatic caching, a breakpoint on the
 * last block), against the Messages stub at `stubUrl` (its root).
 */
export function createLangChainAnthropicChat(options: {
  stubUrl: string;
  model: string;
  systemPrompt: string;
  triggerTokens: number;
  keepMessages: number;
  ttl: '5m' | '1h';
}): LangChainChat {
  const settings = {
    model: options.model,
    apiKey: 'bench-key',
    anthropicApiUrl: options.stubUrl,
    maxRetries: 0,
    maxTokens: 1024,
  };
  const agent = createAgent({
    model: new ChatAnthropic(settings),
    tools: [],
    systemPrompt: options.systemPrompt,
    middleware: [
      summarizationMiddleware({
        model: new ChatAnthropic(settings),
        trigger: { tokens: options.triggerTokens },
        keep: { messages: options.keepMessages },
        tokenCounter: exactCount(createTokenCounter('o200k_base')),
      }),
      anthropicPromptCachingMiddleware({ ttl: options.ttl }),
    ],
  });
  let messages: BaseMessage[] = [];
  return {
    async send(text) {
      const result = await agent.invoke({ messages: [...messages, new HumanMessage(text)] });
      messages = result.messages;
    },
  };
}
