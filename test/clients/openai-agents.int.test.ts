import { Agent, OpenAIConversationsSession, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { lastUserText, replyWithText, replyWithToolCalls } from '../support/openai-stub';
import { summaryResponder } from '../support/summary-stub';
import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { openaiClient } from '../facade/facade-kit';
import {
  chatPacks,
  codeAwareChat,
  FOLDING_SERVER,
  packText,
  threadCount,
  threadMessages,
  threadOfConversation,
} from './clients-kit';

// The OpenAI Agents SDK (@openai/agents 0.20, which brings its own openai 7) against the server's Responses and
// Conversations routes, offline: its own model provider on our base URL, no tracing.
const server = useChatServer(FOLDING_SERVER);
setTracingDisabled(true);

function runner(apiKey = server.token): Runner {
  const modelProvider = new OpenAIProvider({ apiKey, baseURL: `${server.app.baseUrl}/v1`, useResponses: true });
  return new Runner({ modelProvider, tracingDisabled: true });
}

const agent = new Agent({ name: 'Assistant', instructions: 'You are a helpful assistant.', model: 'gpt-4o-mini' });

describe('the Agents SDK with conversationId', () => {
  it('a long chat in one conversation keeps the packs bounded and still answers a detail of the first turn', async () => {
    const conversation = await openaiClient(server).conversations.create({});
    const agents = runner();
    const before = chatPacks(server).length;
    const turns = 30;
    for (let turn = 1; turn <= turns; turn += 1) {
      const text = turn === 1 ? 'Remember the code CODE-1618 for later.' : `Agent turn ${turn}.`;
      const result = await agents.run(agent, text, { conversationId: conversation.id });
      expect(result.finalOutput).toBe(`stub reply to: ${text}`);
    }
    const final = await agents.run(agent, 'Which code did I give you first?', { conversationId: conversation.id });
    expect(final.finalOutput).toContain('CODE-1618');
    const packs = chatPacks(server).slice(before);
    expect(Math.max(...packs.map((pack) => pack.body.messages.length))).toBeLessThanOrEqual(16);
    expect(packText(packs.at(-1)!)).toContain('You are a helpful assistant.');
    expect(packText(packs.at(-1)!)).toContain('Intent: testing long chats.');
    const messages = await threadMessages(server, threadOfConversation(conversation.id));
    expect(messages).toHaveLength(2 * (turns + 1));
    // Streamed runs go on in the same conversation.
    const streamed = await agents.run(agent, 'a streamed agent turn', {
      conversationId: conversation.id,
      stream: true,
    });
    let text = '';
    for await (const chunk of streamed.toTextStream()) text += chunk;
    await streamed.completed;
    expect(text).toBe('stub reply to: a streamed agent turn');
    expect(await threadMessages(server, threadOfConversation(conversation.id))).toHaveLength(2 * (turns + 2));
  });
});

describe('the Agents SDK with previousResponseId', () => {
  it('chains runs by their last response id on one thread; a stranger cannot go on from it', async () => {
    const agents = runner();
    const threads = await threadCount(server);
    const first = await agents.run(agent, 'chain start CODE-2024');
    expect(first.lastResponseId).toMatch(/^resp_/);
    const second = await agents.run(agent, 'chain next', { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe('stub reply to: chain next');
    const third = await agents.run(agent, 'Which code was it?', { previousResponseId: second.lastResponseId });
    expect(third.finalOutput).toContain('CODE-2024');
    expect(await threadCount(server)).toBe(threads + 1);
    const stranger = await server.guest();
    await expect(
      runner(stranger.token).run(agent, 'peek', { previousResponseId: third.lastResponseId }),
    ).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });
});
describe('the Agents SDK with OpenAIConversationsSession', () => {
  it("answers each run from the session's items, and the conversation holds each message once", async () => {
    const sessionUser = await server.guest();
    const session = new OpenAIConversationsSession({ apiKey: sessionUser.token, baseURL: `${server.app.baseUrl}/v1` });
    const agents = runner(sessionUser.token);
    const texts = ['Session start: remember CODE-7777.', 'Session second run.', 'Which code did I mention?'];
    const answers: unknown[] = [];
    for (const text of texts) answers.push((await agents.run(agent, text, { session })).finalOutput);
    expect(answers.slice(0, 2)).toEqual([`stub reply to: ${texts[0]}`, `stub reply to: ${texts[1]}`]);
    expect(answers[2]).toContain('CODE-7777');
    const conversationId = await session.getSessionId();
    const messages = await threadMessages(server, threadOfConversation(conversationId), sessionUser.token);
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', texts[0]],
      ['assistant', `stub reply to: ${texts[0]}`],
      ['user', texts[1]],
      ['assistant', `stub reply to: ${texts[1]}`],
      ['user', texts[2]],
      ['assistant', answers[2]],
    ]);
    // Appended messages are plain: the answers complete, nothing cancelled or streaming.
    expect(messages.every((message) => message.status === 'complete')).toBe(true);
    const items = await session.getItems();
    expect(items).toHaveLength(6);
    // The keyless requests that carried the items are a thread of their own (keyed by their first message), holding
    // the same exchange once: the conversation is not touched by them.
    const threads = (
      (await (await server.app.api('/api/threads', { token: sessionUser.token })).json()) as {
        threads: { id: string }[];
      }
    ).threads.map((thread) => thread.id);
    expect(threads).toHaveLength(2);
    const keyless = threads.find((id) => id !== threadOfConversation(conversationId))!;
    expect((await threadMessages(server, keyless, sessionUser.token)).map((message) => message.content)).toEqual(
      messages.map((message) => message.content),
    );
  });

  it('a run that calls a local tool appends the call and its result once; the next run answers from them', async () => {
    const toolUser = await server.guest();
    server.stub.setResponder(
      summaryResponder({
        chat: (request) => {
          const last = request.body.messages.at(-1);
          if (last?.role === 'tool') return replyWithText(`The weather: ${wireContentText(last.content)}`);
          const offered = (request.body.tools ?? []).map((each) => each.function.name);
          if (/weather/i.test(lastUserText(request.body)) && offered.includes('get_weather'))
            return replyWithToolCalls([{ id: 'call_oslo', name: 'get_weather', arguments: { city: 'Oslo' } }]);
          return codeAwareChat(request);
        },
      }),
    );
    try {
      const weather = tool({
        name: 'get_weather',
        description: 'The weather of a city',
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => `rainy in ${city}`,
      });
      const withTool = new Agent({
        name: 'Weather',
        instructions: 'Use your tool.',
        model: 'gpt-4o-mini',
        tools: [weather],
      });
      const session = new OpenAIConversationsSession({ apiKey: toolUser.token, baseURL: `${server.app.baseUrl}/v1` });
      const agents = runner(toolUser.token);
      expect((await agents.run(withTool, 'What is the weather in Oslo?', { session })).finalOutput).toBe(
        'The weather: rainy in Oslo',
      );
      expect((await agents.run(withTool, 'Thanks, and CODE-4242?', { session })).finalOutput).toBe(
        'stub reply to: Thanks, and CODE-4242?',
      );
      const conversationId = await session.getSessionId();
      const messages = await threadMessages(server, threadOfConversation(conversationId), toolUser.token);
      expect(
        messages.map((message) => [message.role, message.content, message.toolCalls?.map((call) => call.name) ?? []]),
      ).toEqual([
        ['user', 'What is the weather in Oslo?', []],
        ['assistant', '', ['get_weather']],
        ['tool', 'rainy in Oslo', []],
        ['assistant', 'The weather: rainy in Oslo', []],
        ['user', 'Thanks, and CODE-4242?', []],
        ['assistant', 'stub reply to: Thanks, and CODE-4242?', []],
      ]);
    } finally {
      server.stub.setResponder(summaryResponder({ chat: codeAwareChat }));
    }
  });
});
