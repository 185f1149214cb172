import { afterAll, beforeAll } from 'vitest';
import { createChatModels } from '../../src/llm/create-chat-model';
import { createChatPort, createSummarizerPort } from '../../src/llm/model-ports';
import { startAnthropicStub, type AnthropicStub } from '../support/anthropic-messages-stub';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { describeChatModelPortContract } from './chat-model-port.contract';
import { anthropicHarness, openAIHarness, scriptedFakeHarness } from './model-port-harnesses';
import { describeSummarizerPortContract } from './summarizer-port.contract';

// The chat and summarizer ports' contracts on the scripted fake, on the offline model, and on the real adapters:
// ChatOpenAI and Anthropic's Messages API through model-ports.ts, each against its in-process HTTP stub on 127.0.0.1
// (as src/llm's unit tests run them).
let openAI: OpenAIStub;
let anthropic: AnthropicStub;
beforeAll(async () => {
  [openAI, anthropic] = await Promise.all([startOpenAIStub(), startAnthropicStub()]);
});
afterAll(async () => {
  await Promise.all([openAI.close(), anthropic.close()]);
});

describeChatModelPortContract('scripted fake', scriptedFakeHarness);
describeChatModelPortContract(
  'ChatOpenAI on the OpenAI stub',
  openAIHarness(() => openAI, 'chat'),
);
describeChatModelPortContract(
  'Anthropic Messages on its stub',
  anthropicHarness(() => anthropic, 'chat'),
);
describeSummarizerPortContract('scripted fake', scriptedFakeHarness);
describeSummarizerPortContract(
  'ChatOpenAI on the OpenAI stub',
  openAIHarness(() => openAI, 'summarizer'),
);
describeSummarizerPortContract(
  'Anthropic Messages on its stub',
  anthropicHarness(() => anthropic, 'summarizer'),
);

// The offline model is not a language model: it answers by itself (a restatement, an extractive summary) and cannot be
// scripted, so it runs the cases that hold whatever the answer (deltas join to the text, usage, aborts).
const offline = createChatModels({});
describeChatModelPortContract(
  'offline model',
  async () => ({ port: createChatPort(offline.chat, offline.label.model), received: () => [] }),
  { scriptable: false },
);
describeSummarizerPortContract(
  'offline summarizer',
  async () => ({ port: createSummarizerPort(offline.summarizer, offline.label.summaryModel), received: () => [] }),
  { scriptable: false },
);
