import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import type { MessageDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import {
  lastUserText,
  replyWithError,
  replyWithText,
  replyWithToolCalls,
  type StubResponder,
} from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { chatRequests, openaiClient, requestText, SERVICE_KEY } from './facade-kit';

/** Echoes the user; asked for "the code", answers with every CODE-n its pack holds; calls get_weather when offered. */
const chat: StubResponder = (request) => {
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool') return replyWithText(`The weather: ${wireContentText(last.content)}`);
  const text = lastUserText(request.body);
  if (/which code/i.test(text)) {
    const codes = [...new Set(requestText(request).match(/CODE-\d+/g) ?? [])];
    return replyWithText(`The codes I know: ${codes.join(', ') || 'none'}.`);
  }
  const offered = (request.body.tools ?? []).map((tool) => tool.function.name);
  if (/weather/i.test(text) && offered.includes('get_weather'))
    return replyWithToolCalls([{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Oslo' } }], {
      text: 'Let me check.',
    });
  if (/shell/i.test(text) && offered.includes('tools__exec'))
    return replyWithToolCalls([{ id: 'call_s1', name: 'tools__exec', arguments: { cmd: 'ls' } }]);
  return replyWithText(`stub reply to: ${text}`, { chunks: ['stub reply ', `to: ${text}`] });
};

const server = useChatServer({
  stub: { classifyRequest, responder: summaryResponder({ chat }) },
  env: {
    SUMMARY_TRIGGER: 'messages=8',
    SUMMARY_KEEP: 'messages=4',
    RECALL_TOKENS: '0',
    OPENAI_FACADE_KEYS: SERVICE_KEY,
  },
});

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

async function threadMessages(threadId: string, token = server.token): Promise<MessageDto[]> {
  const response = await server.app.api(`/api/threads/${threadId}/messages?limit=200`, { token });
  expect(response.status).toBe(200);
  return ((await response.json()) as { messages: MessageDto[] }).messages;
}

describe('POST /v1/responses with the official SDK', () => {
  it('answers a string input as a completed Response with an output_text message and usage', async () => {
    const client = openaiClient(server);
    const { data: answer, response } = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'hello responses' })
      .withResponse();
    expect(answer.object).toBe('response');
    expect(answer.status).toBe('completed');
    expect(answer.id).toMatch(/^resp_[0-9a-f]{65}$/);
    expect(answer.output_text).toBe('stub reply to: hello responses');
    expect(answer.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(answer.output[0]?.id).toMatch(/^msg_/);
    const upstream = chatRequests(server).at(-1);
    expect(answer.usage).toMatchObject({
      input_tokens: upstream?.promptTokens,
      output_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: expect.any(Number) },
      output_tokens_details: { reasoning_tokens: 0 },
    });
    expect(answer.usage?.total_tokens).toBe((answer.usage?.input_tokens ?? 0) + (answer.usage?.output_tokens ?? 0));
    expect(response.headers.get('x-chat-thread-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('streams the documented event sequence, each event with its sequence_number', async () => {
    const client = openaiClient(server);
    const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'stream me', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('response.created');
    expect(types[1]).toBe('response.in_progress');
    expect(types.filter((type) => type === 'response.output_text.delta').length).toBeGreaterThanOrEqual(1);
    const withoutDeltas = types.filter((type) => type !== 'response.output_text.delta');
    expect(withoutDeltas).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
    const text = events
      .filter((event) => event.type === 'response.output_text.delta')
      .map((event) => (event as OpenAI.Responses.ResponseTextDeltaEvent).delta)
      .join('');
    expect(text).toBe('stub reply to: stream me');
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.output_text ?? completed.response.output).toBeTruthy();
    expect(completed.response.usage?.input_tokens).toBe(chatRequests(server).at(-1)?.promptTokens);
    // The SDK's own stream helper reads the same events into the final Response.
    const final = await client.responses.stream({ model: 'gpt-4o-mini', input: 'helper stream' }).finalResponse();
    expect(final.output_text).toBe('stub reply to: helper stream');
  });

  it('an upstream failure mid-stream is an error event, then response.failed', async () => {
    const client = openaiClient(server);
    server.stub.setResponder(() => replyWithError(400, { message: 'upstream says no' }));
    try {
      const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'fail please', stream: true });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types.slice(-2)).toEqual(['error', 'response.failed']);
    } finally {
      server.stub.setResponder(summaryResponder({ chat }));
    }
  });

  it(
    'stateless with a session-id header: the whole input each time reconciles onto one thread; developer items are the instructions',
    { timeout: 120_000 },
    async () => {
      const client = openaiClient(server);
      const headers = { 'session-id': 'codex-session-1' };
      const developer = 'You are a coding agent. '.repeat(50);
      const input: OpenAI.Responses.ResponseInputItem[] = [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: developer }] },
        {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: '<environment_context>cwd</environment_context>' }],
        },
      ];
      let threadId: string | null = null;
      for (let turn = 1; turn <= 12; turn += 1) {
        const text = turn === 1 ? 'Remember the code CODE-4711 for later.' : `Message number ${turn}.`;
        input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
        const { data: answer, response } = await client.responses
          .create({ model: 'gpt-4o-mini', input, store: false, prompt_cache_key: 'shared-key' }, { headers })
          .withResponse();
        threadId ??= response.headers.get('x-chat-thread-id');
        expect(response.headers.get('x-chat-thread-id')).toBe(threadId);
        expect(answer.output_text).toContain('stub reply to:');
        // What the client received goes back as it was: the output items themselves.
        input.push(...(answer.output as OpenAI.Responses.ResponseInputItem[]));
      }
      input.push({ type: 'message', role: 'user', content: 'Which code did I give you?' });
      const final = await client.responses.create({ model: 'gpt-4o-mini', input, store: false }, { headers });
      expect(final.output_text).toContain('CODE-4711');
      const pack = chatRequests(server).at(-1)!;
      expect(String(pack.body.messages[0]?.content)).toContain('You are a coding agent.');
      expect(pack.body.messages.length).toBeLessThanOrEqual(16);
      const messages = await threadMessages(threadId!);
      const users = messages.filter((message) => message.role === 'user').map((message) => message.content);
      // The environment item and the first prompt are one turn; every message is held once.
      expect(users[0]).toBe('<environment_context>cwd</environment_context>\n\nRemember the code CODE-4711 for later.');
      expect(users).toHaveLength(13);
      expect(new Set(users).size).toBe(13);
      // Another session opening alike is another conversation (prompt_cache_key is no key), and its first request
      // sent again (a retry) is answered again in that session's thread, not in a new one.
      const retried: (string | null)[] = [];
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const { response } = await client.responses
          .create(
            { model: 'gpt-4o-mini', input: input.slice(0, 3), store: false, prompt_cache_key: 'shared-key' },
            { headers: { 'session-id': 'codex-session-2' } },
          )
          .withResponse();
        retried.push(response.headers.get('x-chat-thread-id'));
      }
      expect(retried[0]).not.toBe(threadId);
      expect(retried[1]).toBe(retried[0]);
    },
  );

  it('instructions hold for the response that carries them only', async () => {
    const client = openaiClient(server);
    const headers = { 'X-Thread-Id': 'instructions-1' };
    const first = await client.responses.create(
      { model: 'gpt-4o-mini', input: 'first', instructions: 'Answer like a pirate.' },
      { headers },
    );
    expect(String(chatRequests(server).at(-1)?.body.messages[0]?.content)).toContain('Answer like a pirate.');
    await client.responses.create(
      {
        model: 'gpt-4o-mini',
        input: [
          { role: 'user', content: 'first' },
          ...(first.output as OpenAI.Responses.ResponseInputItem[]),
          { role: 'user', content: 'second' },
        ],
      },
      { headers },
    );
    expect(lastUserText(chatRequests(server).at(-1)!.body)).toBe('second');
    expect(String(chatRequests(server).at(-1)?.body.messages[0]?.content)).not.toContain('pirate');
  });

  it('a function call round trip: the answer ends with function_call items; their output continues the turn', async () => {
    const client = openaiClient(server);
    const headers = { 'X-Thread-Id': 'weather-responses-1' };
    const question: OpenAI.Responses.ResponseInputItem = { role: 'user', content: 'Weather in Oslo?' };
    const first = await client.responses.create(
      { model: 'gpt-4o-mini', input: [question], tools: [weatherTool] },
      { headers },
    );
    const call = first.output.find(
      (item) => item.type === 'function_call',
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_w1', name: 'get_weather' });
    expect(call.id).toMatch(/^fc_/);
    expect(JSON.parse(call.arguments)).toEqual({ city: 'Oslo' });
    const second = await client.responses.create(
      {
        model: 'gpt-4o-mini',
        tools: [weatherTool],
        input: [
          question,
          ...(first.output as OpenAI.Responses.ResponseInputItem[]),
          { type: 'function_call_output', call_id: 'call_w1', output: 'rainy, 7 degrees' },
        ],
      },
      { headers },
    );
    expect(second.output_text).toBe('The weather: rainy, 7 degrees');
    // Streamed, a call comes as a function_call item with its arguments.
    const stream = await client.responses.create(
      { model: 'gpt-4o-mini', input: 'Weather again?', tools: [weatherTool], stream: true },
      { headers: { 'X-Thread-Id': 'weather-responses-2' } },
    );
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toContain('response.function_call_arguments.done');
    expect(types.at(-1)).toBe('response.completed');
  });

  it('hosted tools are dropped and named in X-Chat-Ignored-Tools; namespaced tools are offered as <namespace>__<name>', async () => {
    const client = openaiClient(server);
    const { data: answer, response } = await client.responses
      .create({
        model: 'gpt-4o-mini',
        input: 'run a shell command',
        tools: [
          { type: 'web_search' },
          { type: 'file_search', vector_store_ids: ['vs_1'] },
          {
            type: 'namespace',
            name: 'tools',
            description: 'tools',
            tools: [{ type: 'function', name: 'exec', parameters: { type: 'object', properties: {} } }],
          },
        ],
      })
      .withResponse();
    expect(response.headers.get('x-chat-ignored-tools')).toBe('web_search, file_search');
    const offered = (chatRequests(server).at(-1)?.body.tools ?? []).map((tool) => tool.function.name);
    expect(offered).toContain('tools__exec');
    expect(offered).not.toContain('web_search');
    expect(answer.output[0]).toMatchObject({ type: 'function_call', name: 'exec', namespace: 'tools' });
  });

  it("refuses images and files with a 400 naming the part, in OpenAI's shape", async () => {
    const client = openaiClient(server);
    await expect(
      client.responses.create({
        model: 'gpt-4o-mini',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'what is this?' },
              { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' },
            ],
          },
        ],
      }),
    ).rejects.toMatchObject({ status: 400, param: 'input.0.content.1.type', type: 'invalid_request_error' });
    await expect(
      client.responses.create({
        model: 'gpt-4o-mini',
        input: 'x',
        previous_response_id: 'resp_1',
        conversation: 'conv_1',
      }),
    ).rejects.toMatchObject({ status: 400, param: 'previous_response_id' });
  });
});

describe('previous_response_id: the server holds the conversation', () => {
  it(
    'a multi-turn chat sends only the new message each time: bounded packs, a detail of turn 1 still answered',
    { timeout: 120_000 },
    async () => {
      const client = openaiClient(server);
      let previous: string | null = null;
      let threadId: string | null = null;
      const before = chatRequests(server).length;
      for (let turn = 1; turn <= 14; turn += 1) {
        const text = turn === 1 ? 'Remember the code CODE-9090 for later.' : `Chained message ${turn}.`;
        const { data: answer, response } = await client.responses
          .create({ model: 'gpt-4o-mini', input: text, previous_response_id: previous })
          .withResponse();
        expect(answer.output_text).toBe(`stub reply to: ${text}`);
        expect(answer.previous_response_id).toBe(previous);
        threadId ??= response.headers.get('x-chat-thread-id');
        expect(response.headers.get('x-chat-thread-id')).toBe(threadId);
        previous = answer.id;
      }
      const final = await client.responses.create({
        model: 'gpt-4o-mini',
        input: 'Which code did I give you first?',
        previous_response_id: previous,
      });
      expect(final.output_text).toContain('CODE-9090');
      const packs = chatRequests(server).slice(before);
      expect(Math.max(...packs.map((request) => request.body.messages.length))).toBeLessThanOrEqual(16);
      expect(
        packs.at(-1)!.body.messages.some((message) => /Remember the code/.test(wireContentText(message.content))),
      ).toBe(false);
      const users = (await threadMessages(threadId!)).filter((message) => message.role === 'user');
      expect(users).toHaveLength(15);
    },
  );

  it('naming an older answer continues on a fork without the later turns; the original branch keeps every message', async () => {
    const client = openaiClient(server);
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'branch point alpha' });
    const second = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'later turn beta', previous_response_id: first.id })
      .withResponse();
    const original = second.response.headers.get('x-chat-thread-id')!;
    // A refused request on an older answer writes no branch.
    const threadCount = async () =>
      ((await (await server.app.api('/api/threads', { token: server.token })).json()) as { threads: unknown[] }).threads
        .length;
    const before = await threadCount();
    await expect(
      client.responses.create({
        model: 'gpt-4o-mini',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: 'call_none', output: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 400, param: 'input' });
    await expect(
      client.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: '   ' }),
    ).rejects.toMatchObject({ status: 400 });
    expect(await threadCount()).toBe(before);
    const forked = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'other way gamma', previous_response_id: first.id })
      .withResponse();
    expect(forked.data.output_text).toBe('stub reply to: other way gamma');
    const forkId = forked.response.headers.get('x-chat-thread-id')!;
    expect(forkId).not.toBe(original);
    const pack = requestText(chatRequests(server).at(-1)!);
    expect(pack).toContain('branch point alpha');
    expect(pack).not.toContain('later turn beta');
    const contents = (messages: MessageDto[]) => messages.map((message) => [message.role, message.content]);
    expect(contents(await threadMessages(original))).toEqual([
      ['user', 'branch point alpha'],
      ['assistant', 'stub reply to: branch point alpha'],
      ['user', 'later turn beta'],
      ['assistant', 'stub reply to: later turn beta'],
    ]);
    expect(contents(await threadMessages(forkId))).toEqual([
      ['user', 'branch point alpha'],
      ['assistant', 'stub reply to: branch point alpha'],
      ['user', 'other way gamma'],
      ['assistant', 'stub reply to: other way gamma'],
    ]);
    // Going on from the fork's answer stays on the fork.
    const next = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'and on', previous_response_id: forked.data.id })
      .withResponse();
    expect(next.response.headers.get('x-chat-thread-id')).toBe(forkId);
  });

  it("another user's, a tampered or a made-up id is previous_response_not_found, and stores nothing", async () => {
    const client = openaiClient(server);
    const mine = await client.responses.create({ model: 'gpt-4o-mini', input: 'private detail' });
    const stranger = await server.guest();
    const theirs = openaiClient(server, { apiKey: stranger.token });
    const tampered = `${mine.id.slice(0, -1)}${mine.id.endsWith('0') ? '1' : '0'}`;
    for (const id of [mine.id, tampered, 'resp_123', `resp_${'0'.repeat(65)}`]) {
      await expect(
        theirs.responses.create({ model: 'gpt-4o-mini', input: 'go on', previous_response_id: id }),
      ).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });
    }
    await expect(
      client.responses.create({ model: 'gpt-4o-mini', input: 'go on', previous_response_id: tampered }),
    ).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
    const threads = (await (await server.app.api('/api/threads', { token: stranger.token })).json()) as {
      threads: unknown[];
    };
    expect(threads.threads).toEqual([]);
  });

  it('a function call round trip over previous_response_id: only the function_call_output is sent', async () => {
    const client = openaiClient(server);
    const first = await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'Weather in Oslo, chained?',
      tools: [weatherTool],
    });
    const call = first.output.find(
      (item) => item.type === 'function_call',
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await client.responses.create({
      model: 'gpt-4o-mini',
      tools: [weatherTool],
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny, 20 degrees' }],
    });
    expect(second.output_text).toBe('The weather: sunny, 20 degrees');
    await expect(
      client.responses.create({
        model: 'gpt-4o-mini',
        tools: [weatherTool],
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: 'call_unknown', output: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 400, param: 'input' });
  });
});

describe('conversation: a thread as the Conversations API names it', () => {
  it("appends the input to the thread and answers there; another user's or an unknown conversation is 404", async () => {
    const client = openaiClient(server);
    const first = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'conversation opener delta' })
      .withResponse();
    const threadId = first.response.headers.get('x-chat-thread-id')!;
    const conversation = `conv_${threadId.replace(/-/g, '')}`;
    const { data: next, response } = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'second in conversation', conversation })
      .withResponse();
    expect(next.output_text).toBe('stub reply to: second in conversation');
    expect(response.headers.get('x-chat-thread-id')).toBe(threadId);
    expect(requestText(chatRequests(server).at(-1)!)).toContain('conversation opener delta');
    await client.responses.create({ model: 'gpt-4o-mini', input: 'third', conversation: { id: conversation } });
    expect((await threadMessages(threadId)).map((message) => message.content)).toEqual([
      'conversation opener delta',
      'stub reply to: conversation opener delta',
      'second in conversation',
      'stub reply to: second in conversation',
      'third',
      'stub reply to: third',
    ]);
    const stranger = openaiClient(server, { apiKey: (await server.guest()).token });
    for (const id of [conversation, 'conv_nothing', `conv_${'0'.repeat(32)}`])
      await expect(
        stranger.responses.create({ model: 'gpt-4o-mini', input: 'intrude', conversation: id }),
      ).rejects.toMatchObject({ status: 404, param: 'conversation' });
    expect(await threadMessages(threadId)).toHaveLength(6);
  });
});

describe('stored responses: retrieve, input items, delete', () => {
  it('retrieves a response and its input items; deleting it forgets the answer (a tombstone), the user message stays', async () => {
    const client = openaiClient(server);
    const { data: created, response } = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'keep this question epsilon' })
      .withResponse();
    const threadId = response.headers.get('x-chat-thread-id')!;
    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved).toMatchObject({ id: created.id, object: 'response', status: 'completed' });
    expect(retrieved.output_text).toBe('stub reply to: keep this question epsilon');
    expect(retrieved.usage).toEqual(created.usage);
    const items = [];
    for await (const item of client.responses.inputItems.list(created.id)) items.push(item);
    expect(items).toMatchObject([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'keep this question epsilon' }] },
    ]);
    // Another user reaches none of it.
    const stranger = openaiClient(server, { apiKey: (await server.guest()).token });
    await expect(stranger.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.responses.inputItems.list(created.id)).rejects.toMatchObject({ status: 404 });
    expect((await threadMessages(threadId)).map((message) => message.deleted)).toEqual([false, false]);

    await client.responses.delete(created.id);
    const messages = await threadMessages(threadId);
    expect(messages.map((message) => [message.role, message.content, message.deleted])).toEqual([
      ['user', 'keep this question epsilon', false],
      ['assistant', '', true],
    ]);
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.responses.create({ model: 'gpt-4o-mini', input: 'go on', previous_response_id: created.id }),
    ).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });

  it('a response made with store: false is kept in the transcript but cannot be fetched or continued', async () => {
    const client = openaiClient(server);
    const { data: unstored, response } = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'not for later', store: false })
      .withResponse();
    expect((unstored as unknown as { store: boolean }).store).toBe(false);
    await expect(client.responses.retrieve(unstored.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.inputItems.list(unstored.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.responses.create({ model: 'gpt-4o-mini', input: 'go on', previous_response_id: unstored.id }),
    ).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
    const messages = await threadMessages(response.headers.get('x-chat-thread-id')!);
    expect(messages.map((message) => message.content)).toEqual(['not for later', 'stub reply to: not for later']);
  });
});

describe('POST /v1/responses/input_tokens', () => {
  it("counts what the pack for the input would cost: a thread's pack plus the new input, close to what the upstream then counts", async () => {
    const client = openaiClient(server);
    let previous: string | undefined;
    for (const text of ['count one', 'count two', 'count three'])
      previous = (await client.responses.create({ model: 'gpt-4o-mini', input: text, previous_response_id: previous }))
        .id;
    const counted = await client.responses.inputTokens.count({
      model: 'gpt-4o-mini',
      input: 'count four',
      previous_response_id: previous,
    });
    expect(counted.object).toBe('response.input_tokens');
    await client.responses.create({ model: 'gpt-4o-mini', input: 'count four', previous_response_id: previous });
    const upstream = chatRequests(server).at(-1)!.promptTokens!;
    expect(Math.abs(counted.input_tokens - upstream)).toBeLessThanOrEqual(Math.ceil(upstream * 0.1));
    // Without a thread: the input as a new conversation's pack; more input, more tokens.
    const short = await client.responses.inputTokens.count({ input: 'short' });
    const long = await client.responses.inputTokens.count({ input: 'a much longer input '.repeat(50) });
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 100);
    await expect(
      client.responses.inputTokens.count({ input: 'x', previous_response_id: 'resp_nothing' }),
    ).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });
});

describe("Codex CLI's request, as it sends it", () => {
  it('answers a Codex-shaped streamed request with event:/data: frames, hosted tools dropped, one thread per session', async () => {
    const body = (prompt: string, history: unknown[] = []) => ({
      model: 'gpt-4o-mini',
      instructions: '',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Agent rules. '.repeat(3000) }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context/>' }] },
        ...history,
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt }] },
      ],
      tools: [
        {
          type: 'function',
          name: 'exec_command',
          description: 'Runs',
          strict: false,
          parameters: { type: 'object', properties: {} },
        },
        {
          type: 'namespace',
          name: 'multi_agent_v1',
          description: 'Agents',
          tools: [{ type: 'function', name: 'spawn' }],
        },
        { type: 'web_search', external_web_access: false },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { summary: 'auto' },
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'codex-session-9',
      client_metadata: { originator: 'codex_exec' },
    });
    const post = async (payload: unknown) => {
      const response = await server.app.api('/v1/responses', {
        method: 'POST',
        token: server.token,
        headers: {
          accept: 'text/event-stream',
          'session-id': 'codex-session-9',
          'thread-id': 'codex-session-9',
          'x-codex-beta-features': 'remote_compaction_v2',
          originator: 'codex_exec',
        },
        json: payload,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(response.headers.get('x-chat-ignored-tools')).toBe('web_search');
      const frames = (await response.text()).split('\n\n').filter(Boolean);
      const events = frames.map((frame) => {
        const [eventLine, dataLine] = frame.split('\n');
        const data = JSON.parse((dataLine ?? '').replace(/^data: /, '')) as { type: string; sequence_number: number };
        expect(eventLine).toBe(`event: ${data.type}`);
        return data;
      });
      return { events, threadId: response.headers.get('x-chat-thread-id') };
    };
    const first = await post(body('first codex prompt'));
    expect(first.events.at(-1)?.type).toBe('response.completed');
    const done = first.events.find((event) => event.type === 'response.output_item.done') as unknown as {
      item: unknown;
    };
    const second = await post(
      body('second codex prompt', [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first codex prompt' }] },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
        done.item,
      ]),
    );
    expect(second.threadId).toBe(first.threadId);
    const completed = second.events.at(-1) as unknown as { response: { output: { content: { text: string }[] }[] } };
    expect(completed.response.output[0]?.content[0]?.text).toBe('stub reply to: second codex prompt');
    const pack = chatRequests(server).at(-1)!;
    expect((pack.body.tools ?? []).map((tool) => tool.function.name)).toEqual(
      expect.arrayContaining(['exec_command', 'multi_agent_v1__spawn']),
    );
    expect(String(pack.body.messages[0]?.content)).toContain('Agent rules.');
  });
});

describe('POST, GET and DELETE /v1/conversations', () => {
  it('opens a thread that responses go on in, with its developer items as instructions; a stranger reaches nothing', async () => {
    const client = openaiClient(server);
    const conversation = await client.conversations.create({
      items: [{ type: 'message', role: 'developer', content: 'Speak like a sailor.' }],
    });
    expect(conversation).toMatchObject({ object: 'conversation', metadata: {} });
    expect(conversation.id).toMatch(/^conv_[0-9a-f]{32}$/);
    const { data: answer, response } = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'ahoy there', conversation: conversation.id })
      .withResponse();
    expect(answer.output_text).toBe('stub reply to: ahoy there');
    expect(answer.conversation).toEqual({ id: conversation.id });
    expect(`conv_${response.headers.get('x-chat-thread-id')?.replace(/-/g, '')}`).toBe(conversation.id);
    expect(String(chatRequests(server).at(-1)?.body.messages[0]?.content)).toContain('Speak like a sailor.');
    expect(await client.conversations.retrieve(conversation.id)).toMatchObject({ id: conversation.id });

    await expect(
      client.conversations.create({ items: [{ type: 'message', role: 'system', content: 'x'.repeat(200_000) }] }),
    ).rejects.toMatchObject({ status: 413 });
    // Metadata: at most 16 pairs, kept and returned, replaced by an update; a stranger cannot update it.
    const tagged = await client.conversations.create({ metadata: { topic: 'boats' } });
    expect(tagged.metadata).toEqual({ topic: 'boats' });
    expect((await client.conversations.retrieve(tagged.id)).metadata).toEqual({ topic: 'boats' });
    const updated = await client.conversations.update(tagged.id, { metadata: { topic: 'ships', lang: 'en' } });
    expect(updated).toMatchObject({ id: tagged.id, metadata: { topic: 'ships', lang: 'en' } });
    expect((await client.conversations.retrieve(tagged.id)).metadata).toEqual({ topic: 'ships', lang: 'en' });
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_value, index) => [`k${index}`, 'v']));
    await expect(client.conversations.create({ metadata: seventeen })).rejects.toMatchObject({
      status: 400,
      param: 'metadata',
    });
    await expect(client.conversations.update(tagged.id, { metadata: seventeen })).rejects.toMatchObject({
      status: 400,
      param: 'metadata',
    });
    const stranger = openaiClient(server, { apiKey: (await server.guest()).token });
    await expect(stranger.conversations.retrieve(conversation.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.conversations.delete(conversation.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.conversations.update(tagged.id, { metadata: { topic: 'mine' } })).rejects.toMatchObject({
      status: 404,
    });
    expect((await client.conversations.retrieve(tagged.id)).metadata).toEqual({ topic: 'ships', lang: 'en' });

    expect(await client.conversations.delete(conversation.id)).toMatchObject({ id: conversation.id, deleted: true });
    await expect(client.conversations.retrieve(conversation.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.responses.create({ model: 'gpt-4o-mini', input: 'still there?', conversation: conversation.id }),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe('a service key acting for its end users', () => {
  it("keeps each end user's responses to them (X-User-Id)", async () => {
    const alice = openaiClient(server, { apiKey: SERVICE_KEY, headers: { 'X-User-Id': 'alice' } });
    const bob = openaiClient(server, { apiKey: SERVICE_KEY, headers: { 'X-User-Id': 'bob' } });
    const first = await alice.responses.create({ model: 'gpt-4o-mini', input: 'alice secret zeta' });
    const next = await alice.responses.create({ model: 'gpt-4o-mini', input: 'more', previous_response_id: first.id });
    expect(next.output_text).toBe('stub reply to: more');
    await expect(
      bob.responses.create({ model: 'gpt-4o-mini', input: 'peek', previous_response_id: first.id }),
    ).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
    await expect(bob.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    expect((await alice.responses.retrieve(first.id)).output_text).toBe('stub reply to: alice secret zeta');
    // Without naming the end user, a service key is refused.
    await expect(
      openaiClient(server, { apiKey: SERVICE_KEY }).responses.create({ model: 'gpt-4o-mini', input: 'who?' }),
    ).rejects.toMatchObject({ status: 400, param: 'user' });
  });
});
