import { HumanMessage, type BaseMessage } from 'langchain';
import { DEFAULT_SYSTEM_PROMPT } from '../src/app/context-settings-from-env';
import { createTokenCounter } from '../src/core/context';
import { startOpenAIStub } from '../test/support/openai-stub';
import { createSummarizingAgent } from './cache-langchain';
import type { ConversationRun, ConversationTurn } from './conversation';
import { classifyBoth, CONVERSATION_POLICY, scriptedMessage, scriptedResponder } from './support/script';

/**
 * The peer: LangChain.js' own `createAgent` with `summarizationMiddleware`, the same stub, trigger, keep and
 * summarizer delay, and the same exact token counter (so both trigger at the same point). Its state is carried
 * in memory between turns (no database, no HTTP server: the most favourable setting for it). Its summary runs
 * inside the turn, before the model call.
 */
export async function runPeerConversation(options: {
  turns: number;
  summaryDelayMs: number;
}): Promise<ConversationRun> {
  const stub = await startOpenAIStub({
    classifyRequest: classifyBoth,
    responder: scriptedResponder({ summaryDelayMs: options.summaryDelayMs }),
    maxContextTokens: 1_000_000,
  });
  try {
    const settings = { model: 'gpt-4o-mini', apiKey: 'bench-key', configuration: { baseURL: stub.url }, maxRetries: 0 };
    const counter = createTokenCounter('o200k_base');
    // Not streaming: LangChain's streaming `invoke` estimates usage with tiktoken ranks fetched from the network.
    const agent = createSummarizingAgent({
      settings,
      systemPrompt: DEFAULT_SYSTEM_PROMPT,
      triggerTokens: CONVERSATION_POLICY.triggerTokens,
      keepMessages: CONVERSATION_POLICY.keepMessages,
      counter,
    });
    let messages: BaseMessage[] = [];
    let fullHistory = counter.countMessage({ role: 'system', content: DEFAULT_SYSTEM_PROMPT }) + 3;
    const turns: ConversationTurn[] = [];
    for (let turn = 1; turn <= options.turns; turn += 1) {
      const summariesBefore = stub.requests.filter((request) => request.kind === 'summary').length;
      const user = new HumanMessage(scriptedMessage(turn));
      const started = performance.now();
      const result = await agent.invoke({ messages: [...messages, user] });
      const latencyMs = performance.now() - started;
      messages = result.messages;
      const chat = stub.requests.filter((request) => request.kind === 'chat').at(-1);
      fullHistory += counter.countMessage({ role: 'user', content: user.text });
      turns.push({
        turn,
        latencyMs,
        promptTokens: chat?.promptTokens ?? 0,
        fullHistoryTokens: fullHistory,
        firedFold: stub.requests.filter((request) => request.kind === 'summary').length > summariesBefore,
      });
      fullHistory += counter.countMessage({ role: 'assistant', content: messages.at(-1)?.text ?? '' });
    }
    const summaries = stub.requests.filter((request) => request.kind === 'summary');
    return {
      turns,
      foldLatencyMs: [],
      foldCpuMs: [],
      summaryCalls: summaries.length,
      summaryPromptTokens: summaries.map((request) => request.promptTokens),
    };
  } finally {
    await stub.close();
  }
}
