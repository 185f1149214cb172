import { ChatOpenAI } from '@langchain/openai';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import type { MessageDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { echoResponder, replyWithText, replyWithToolCalls, type StubResponder } from '../support/openai-stub';
import { classifyRequest } from '../support/summary-stub';
import { chatRequests, openaiClient, requestText } from './facade-kit';

/** Calls get_weather when offered to a user's question; given its result last, answers from it. */
const weather: StubResponder = (request) => {
  if (request.kind !== 'chat') return echoResponder(request);
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool') return replyWithText(`The weather: ${wireContentText(last.content)}`);
  if (/weather/i.test(wireContentText(last?.content ?? '')) === false) return echoResponder(request);
  if ((request.body.tools ?? []).some((tool) => tool.function.name === 'get_weather')) {
    return replyWithToolCalls([{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Oslo' } }], {
      text: 'Let me check.',
    });
  }
  return echoResponder(request);
};

const server = useChatServer({ stub: { classifyRequest, responder: weather } });

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

describe('client tools through the OpenAI-compatible route', () => {
  it('a call of a client tool ends the answer with tool_calls; the results sent next continue the turn', async () => {
    const client = openaiClient(server);
    const headers = { 'X-Thread-Id': 'weather-1' };
    const question = { role: 'user' as const, content: 'Weather in Oslo?' };
    const first = await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [question], tools },
      { headers },
    );
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe('Let me check.');
    const call = choice.message.tool_calls?.[0];
    expect(call).toMatchObject({ id: 'call_w1', type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse((call as { function: { arguments: string } }).function.arguments)).toEqual({ city: 'Oslo' });
    // Offered with ours, except our async tools (a stateless client has no channel for their follow-up).
    const offered = (chatRequests(server).at(-1)?.body.tools ?? []).map((tool) => tool.function.name);
    expect(offered).toEqual(expect.arrayContaining(['get_weather', 'calculator']));
    expect(offered).not.toContain('analyze_thread');

    const second = await client.chat.completions.create(
      {
        model: 'gpt-4o-mini',
        tools,
        messages: [question, choice.message, { role: 'tool', tool_call_id: 'call_w1', content: 'rainy, 7 degrees' }],
      },
      { headers },
    );
    expect(second.choices[0]?.message.content).toBe('The weather: rainy, 7 degrees');
    expect(second.choices[0]?.finish_reason).toBe('stop');
    const threadId = (
      await client.chat.completions
        .create(
          {
            model: 'gpt-4o-mini',
            tools,
            messages: [
              question,
              choice.message,
              { role: 'tool', tool_call_id: 'call_w1', content: 'rainy, 7 degrees' },
              { role: 'assistant', content: second.choices[0]?.message.content ?? '' },
              { role: 'user', content: 'thanks' },
            ],
          },
          { headers },
        )
        .withResponse()
    ).response.headers.get('x-chat-thread-id');
    const messages = (
      (await (await server.app.api(`/api/threads/${threadId}/messages?limit=50`, { token: server.token })).json()) as {
        messages: MessageDto[];
      }
    ).messages;
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Weather in Oslo?'],
      ['assistant', 'Let me check.'],
      ['tool', 'rainy, 7 degrees'],
      ['assistant', 'The weather: rainy, 7 degrees'],
      ['user', 'thanks'],
      ['assistant', 'stub reply to: thanks'],
    ]);
    expect(messages[1]?.toolCalls).toEqual([{ id: 'call_w1', name: 'get_weather', args: { city: 'Oslo' } }]);
  });

  it("our inline tools run server-side, unseen: the answer joins the rounds' texts, usage sums every upstream call", async () => {
    const client = openaiClient(server);
    server.stub.setResponder((request) => {
      const last = request.body.messages.at(-1);
      if (last?.role === 'tool') return replyWithText(`So it is ${wireContentText(last.content)}.`);
      return replyWithToolCalls([{ id: 'call_c1', name: 'calculator', arguments: { expression: '6*7' } }], {
        text: 'Computing.',
      });
    });
    const before = server.stub.requests.length;
    try {
      const { data: stream, response } = await client.chat.completions
        .create(
          {
            model: 'gpt-4o-mini',
            stream: true,
            stream_options: { include_usage: true },
            messages: [{ role: 'user', content: 'what is 6*7?' }],
          },
          { headers: { 'X-Thread-Id': 'server-tools' } },
        )
        .withResponse();
      let answer = '';
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        answer += chunk.choices[0]?.delta.content ?? '';
        expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
        usage = chunk.usage ?? usage;
      }
      expect(answer).toBe('Computing.\n\nSo it is 6*7 = 42.');
      const calls = server.stub.requests.slice(before);
      expect(calls).toHaveLength(2);
      expect(usage?.prompt_tokens).toBe(calls[0]!.promptTokens + calls[1]!.promptTokens);
      // The next request carries the answer as the client saw it: recognised, a plain turn.
      server.stub.reset();
      const next = await client.chat.completions
        .create(
          {
            model: 'gpt-4o-mini',
            messages: [
              { role: 'user', content: 'what is 6*7?' },
              { role: 'assistant', content: answer },
              { role: 'user', content: 'thanks' },
            ],
          },
          { headers: { 'X-Thread-Id': 'server-tools' } },
        )
        .withResponse();
      expect(next.response.headers.get('x-chat-thread-id')).toBe(response.headers.get('x-chat-thread-id'));
      expect(next.data.choices[0]?.message.content).toBe('stub reply to: thanks');
    } finally {
      server.stub.reset();
    }
  });

  it('streams a client tool call as tool_calls deltas', async () => {
    const stream = await openaiClient(server).chat.completions.create(
      {
        model: 'gpt-4o-mini',
        tools,
        stream: true,
        messages: [{ role: 'user', content: 'Weather there?' }],
      },
      { headers: { 'X-Thread-Id': 'weather-stream' } },
    );
    const calls: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? [])
        if (call.function?.name) calls.push(call.function.name);
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(calls).toEqual(['get_weather']);
    expect(finish).toBe('tool_calls');
  });

  it('refuses tool results that answer no open call, naming the call', async () => {
    const client = openaiClient(server);
    const headers = { 'X-Thread-Id': 'weather-bad' };
    const question = { role: 'user' as const, content: 'Weather in Rome?' };
    const first = await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [question], tools },
      { headers },
    );
    const asked = first.choices[0]!.message;
    const forged = {
      ...asked,
      tool_calls: [
        { id: 'call_forged', type: 'function' as const, function: { name: 'get_weather', arguments: '{}' } },
      ],
    };
    await expect(
      client.chat.completions.create(
        {
          model: 'gpt-4o-mini',
          tools,
          messages: [question, forged, { role: 'tool', tool_call_id: 'call_forged', content: 'sunny' }],
        },
        { headers },
      ),
    ).rejects.toMatchObject({ status: 400, type: 'invalid_request_error' });
  });
});

describe("LangChain's ChatOpenAI against the route", () => {
  it("invokes and streams with the whole history; the system message becomes the thread's instructions", async () => {
    const model = new ChatOpenAI({
      model: 'gpt-4o-mini',
      apiKey: server.token,
      maxRetries: 0,
      configuration: { baseURL: `${server.app.baseUrl}/v1`, defaultHeaders: { 'X-Thread-Id': 'langchain-1' } },
    });
    const system = new SystemMessage('Answer like a pirate.');
    const first = await model.invoke([system, new HumanMessage('ahoy')]);
    expect(first.content).toBe('stub reply to: ahoy');
    let streamed = '';
    for await (const chunk of await model.stream([
      system,
      new HumanMessage('ahoy'),
      new AIMessage(String(first.content)),
      new HumanMessage('where is the treasure?'),
    ])) {
      streamed += typeof chunk.content === 'string' ? chunk.content : '';
    }
    expect(streamed).toBe('stub reply to: where is the treasure?');
    const pack = chatRequests(server).at(-1)!;
    expect(String(pack.body.messages[0]?.content)).toContain('Answer like a pirate.');
    expect(requestText(pack)).toContain('ahoy');
  });
});
