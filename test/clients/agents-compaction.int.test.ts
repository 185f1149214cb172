import OpenAI from 'openai';
import {
  Agent,
  OpenAIResponsesCompactionSession,
  run,
  setDefaultOpenAIClient,
  setOpenAIAPI,
  setTracingDisabled,
} from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, type StubResponder } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { chatRequests, requestText } from '../facade/facade-kit';

/** Echoes the user; asked "which code", answers with every CODE-n its pack holds. */
const chat: StubResponder = (request) => {
  const text = lastUserText(request.body);
  if (/which code/i.test(text)) {
    const codes = [...new Set(requestText(request).match(/CODE-\d+/g) ?? [])];
    return replyWithText(`The codes I know: ${codes.join(', ') || 'none'}.`);
  }
  return replyWithText(`stub reply to: ${text}`);
};

/** The name the Agents SDK's compaction session insists on (an OpenAI-looking one), served as an alias. */
const ALIAS = 'gpt-4.1-mini';

const server = useChatServer({
  stub: { classifyRequest, responder: summaryResponder({ chat }) },
  env: {
    SUMMARY_TRIGGER: 'messages=40',
    SUMMARY_KEEP: 'messages=2',
    SUMMARY_MAX_TOKENS: '200',
    RECALL_TOKENS: '0',
    FACADE_MODEL_ALIASES: ALIAS,
  },
});

async function threadIds(): Promise<string[]> {
  const response = await server.app.api('/api/threads?limit=100', { token: server.token });
  return ((await response.json()) as { threads: { id: string }[] }).threads.map((thread) => thread.id);
}

describe('@openai/agents OpenAIResponsesCompactionSession against the server', () => {
  it(
    'compacts through responses.compact and goes on from the summary in the same thread',
    { timeout: 180_000 },
    async () => {
      // The Agents SDK brings its own copy of the openai package: the same client, typed as its copy's.
      const client = new OpenAI({
        apiKey: server.token,
        baseURL: `${server.app.baseUrl}/v1`,
        maxRetries: 0,
      }) as unknown as Parameters<typeof setDefaultOpenAIClient>[0];
      setDefaultOpenAIClient(client);
      setOpenAIAPI('responses');
      setTracingDisabled(true);
      const agent = new Agent({ name: 'assistant', instructions: 'Answer briefly.', model: ALIAS });
      let compactions = 0;
      const session = new OpenAIResponsesCompactionSession({
        client,
        model: ALIAS,
        // Compact once the session holds four answers (the default waits for ten).
        shouldTriggerCompaction: ({ compactionCandidateItems }) => {
          const due = compactionCandidateItems.length >= 4 && compactions === 0;
          if (due) compactions += 1;
          return due;
        },
      });
      const prompts = ['Remember CODE-31 for me.', 'Second turn.', 'Third turn.', 'Fourth turn.'];
      for (const prompt of prompts) {
        const result = await run(agent, prompt, { session });
        expect(result.finalOutput).toBe(`stub reply to: ${prompt}`);
      }
      expect(compactions).toBe(1);
      const items = await session.getItems();
      expect(items.filter((item) => item.type === 'compaction')).toHaveLength(1);
      expect(items.some((item) => item.type === 'message' && item.role === 'assistant')).toBe(false);
      expect(await threadIds()).toHaveLength(1);

      const answer = await run(agent, 'Which code did I ask you to remember?', { session });
      expect(answer.finalOutput).toContain('CODE-31');
      const pack = requestText(chatRequests(server).at(-1) as never);
      expect(pack).toContain('Intent: testing long chats');
      expect(pack).not.toContain('Remember CODE-31 for me.');
      const more = await run(agent, 'One more turn.', { session });
      expect(more.finalOutput).toBe('stub reply to: One more turn.');
      const [threadId] = await threadIds();
      expect(await threadIds()).toHaveLength(1);
      const messages = await server.app.api(`/api/threads/${threadId}/messages?limit=200`, { token: server.token });
      const texts = ((await messages.json()) as { messages: { content: string }[] }).messages.map(
        (message) => message.content,
      );
      for (const prompt of [...prompts, 'Which code did I ask you to remember?', 'One more turn.'])
        expect(texts.filter((text) => text === prompt)).toHaveLength(1);
    },
  );
});
