import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { useChatServer } from '../support/chat-server';
import { waitFor } from '../support/wait-for';
import { lastUserText, replyWithText, replyWithToolCalls, type StubResponder } from '../support/openai-stub';
import { chatRequests, openaiClient, SERVICE_KEY } from './facade-kit';

/** Echoes the user; calls get_weather when asked for the weather and offered it; answers a tool result. */
const chat: StubResponder = (request) => {
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool') return replyWithText(`The weather: ${wireContentText(last.content)}`);
  const text = lastUserText(request.body);
  const offered = (request.body.tools ?? []).map((tool) => tool.function.name);
  if (/weather/i.test(text) && offered.includes('get_weather'))
    return replyWithToolCalls([{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Oslo' } }], {
      text: 'Let me check.',
    });
  return replyWithText(`stub reply to: ${text}`);
};

const server = useChatServer({ stub: { responder: chat }, env: { OPENAI_FACADE_KEYS: SERVICE_KEY } });

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

/** A conversation holding a question, an answer, a tool call round and another exchange. */
async function conversationWithTurns(client: OpenAI) {
  const conversation = await client.conversations.create({});
  await client.responses.create({ model: 'gpt-4o-mini', input: 'first question', conversation: conversation.id });
  const asked = await client.responses.create({
    model: 'gpt-4o-mini',
    input: 'Weather in Oslo?',
    tools: [weatherTool],
    conversation: conversation.id,
  });
  const call = asked.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
  await client.responses.create({
    model: 'gpt-4o-mini',
    tools: [weatherTool],
    conversation: conversation.id,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: 'rainy' }],
  });
  await client.responses.create({ model: 'gpt-4o-mini', input: 'last question', conversation: conversation.id });
  return conversation;
}

/** What an item says, in one line. */
function gist(item: OpenAI.Conversations.ConversationItem): string {
  if (item.type === 'message')
    return `${item.role}: ${item.content.map((part) => ('text' in part ? part.text : part.type)).join('')}`;
  if (item.type === 'function_call') return `call ${item.name} ${item.arguments}`;
  if (item.type === 'function_call_output') return `result ${String(item.output)}`;
  return item.type;
}

const TRANSCRIPT = [
  'user: first question',
  'assistant: stub reply to: first question',
  'user: Weather in Oslo?',
  'assistant: Let me check.',
  'call get_weather {"city":"Oslo"}',
  'result rainy',
  'assistant: The weather: rainy',
  'user: last question',
  'assistant: stub reply to: last question',
];

describe('GET /v1/conversations/{id}/items', () => {
  it('lists the transcript as items, newest first by default, in cursor pages either way', async () => {
    const client = openaiClient(server);
    const conversation = await conversationWithTurns(client);
    const newest = await client.conversations.items.list(conversation.id);
    expect(newest.data.map(gist)).toEqual([...TRANSCRIPT].reverse());
    expect(newest.has_more).toBe(false);
    const ids = newest.data.map((item) => item.id);
    expect(ids.every((id) => /^(msg|fc)_[0-9a-f]{32}(_\d+)?$/.test(id ?? ''))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // The call and its result carry the model's call id.
    const call = newest.data.find((item) => item.type === 'function_call');
    const result = newest.data.find((item) => item.type === 'function_call_output');
    expect(call && 'call_id' in call && call.call_id).toBe('call_w1');
    expect(result && 'call_id' in result && result.call_id).toBe('call_w1');

    // Pages of 2, oldest first, walked by `after` (the SDK's auto-pagination): the same items, each once.
    const walked: string[] = [];
    const firstPage = await client.conversations.items.list(conversation.id, { order: 'asc', limit: 2 });
    expect(firstPage.data).toHaveLength(2);
    expect(firstPage.has_more).toBe(true);
    for await (const item of client.conversations.items.list(conversation.id, { order: 'asc', limit: 2 }))
      walked.push(gist(item));
    expect(walked).toEqual(TRANSCRIPT);
    // A page after the function call (an item inside an answer) goes on with its result.
    const afterCall = await client.conversations.items.list(conversation.id, {
      order: 'asc',
      after: call!.id!,
      limit: 1,
      include: ['message.output_text.logprobs'],
    });
    expect(afterCall.data.map(gist)).toEqual(['result rainy']);
    expect(afterCall.has_more).toBe(true);
    // Descending from the same place: the items before it, newest first.
    const before = await client.conversations.items.list(conversation.id, { after: call!.id!, limit: 20 });
    expect(before.data.map(gist)).toEqual(TRANSCRIPT.slice(0, 4).reverse());
    expect(before.has_more).toBe(false);

    await expect(client.conversations.items.list(conversation.id, { limit: 101 })).rejects.toMatchObject({
      status: 400,
      param: 'limit',
    });
    await expect(client.conversations.items.list(conversation.id, { after: 'msg_nothing' })).rejects.toMatchObject({
      status: 400,
      param: 'after',
    });
  });

  it('retrieves an item by id; a stranger, an unknown id or another conversation reaches nothing', async () => {
    const client = openaiClient(server);
    const conversation = await conversationWithTurns(client);
    const items = (await client.conversations.items.list(conversation.id, { order: 'asc' })).data;
    for (const item of items)
      expect(await client.conversations.items.retrieve(item.id!, { conversation_id: conversation.id })).toEqual(item);
    const other = await client.conversations.create({});
    const stranger = openaiClient(server, { apiKey: (await server.guest()).token });
    const item = items[0]!.id!;
    await expect(stranger.conversations.items.list(conversation.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      stranger.conversations.items.retrieve(item, { conversation_id: conversation.id }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(stranger.conversations.items.delete(item, { conversation_id: conversation.id })).rejects.toMatchObject(
      { status: 404 },
    );
    await expect(client.conversations.items.retrieve(item, { conversation_id: other.id })).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      client.conversations.items.retrieve(`msg_${'0'.repeat(32)}`, { conversation_id: conversation.id }),
    ).rejects.toMatchObject({ status: 404 });
    expect((await client.conversations.items.list(conversation.id)).data).toHaveLength(TRANSCRIPT.length);
  });
});

describe('DELETE /v1/conversations/{id}/items/{item_id}', () => {
  it('forgets the message: it leaves the items and the next pack, and answers the conversation', async () => {
    const client = openaiClient(server);
    const conversation = await client.conversations.create({});
    await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'secret word is kiwi',
      conversation: conversation.id,
    });
    await client.responses.create({ model: 'gpt-4o-mini', input: 'second', conversation: conversation.id });
    const items = (await client.conversations.items.list(conversation.id, { order: 'asc' })).data;
    const secret = items.find((item) => gist(item) === 'user: secret word is kiwi')!;
    const deleted = await client.conversations.items.delete(secret.id!, { conversation_id: conversation.id });
    expect(deleted).toMatchObject({ id: conversation.id, object: 'conversation' });
    const left = (await client.conversations.items.list(conversation.id, { order: 'asc' })).data.map(gist);
    expect(left).toEqual([
      'assistant: stub reply to: secret word is kiwi',
      'user: second',
      'assistant: stub reply to: second',
    ]);
    await expect(
      client.conversations.items.retrieve(secret.id!, { conversation_id: conversation.id }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      client.conversations.items.delete(secret.id!, { conversation_id: conversation.id }),
    ).rejects.toMatchObject({ status: 404 });
    await client.responses.create({ model: 'gpt-4o-mini', input: 'third', conversation: conversation.id });
    const pack = chatRequests(server)
      .at(-1)!
      .body.messages.map((message) => wireContentText(message.content));
    expect(pack).toContain('second');
    expect(pack).not.toContain('secret word is kiwi');
    // The web app's transcript keeps a tombstone in its place.
    const threadId = conversation.id.slice('conv_'.length);
    const response = await server.app.api(
      `/api/threads/${threadId.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5')}/messages`,
      { token: server.token },
    );
    const messages = ((await response.json()) as { messages: { deleted: boolean; content: string }[] }).messages;
    expect(messages[0]).toMatchObject({ deleted: true, content: '' });
  });
});

describe('POST /v1/conversations/{id}/items', () => {
  it('appends items without running a turn: plain user messages, complete answers, tool calls and results', async () => {
    const client = openaiClient(server);
    const conversation = await client.conversations.create({});
    const before = server.stub.requests.length;
    const added = await client.conversations.items.create(conversation.id, {
      items: [
        { type: 'message', role: 'user', content: 'appended question' },
        // An answer as another response's output held it (its id is not kept: the item gets one of ours).
        {
          type: 'message',
          id: 'msg_elsewhere',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }],
        },
        { type: 'function_call', call_id: 'call_a1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_a1', output: 'sunny' },
        { type: 'message', role: 'assistant', content: 'It is sunny.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a question nobody answered' }] },
      ],
    });
    const appended = [
      'user: appended question',
      'assistant: Let me check.',
      'call get_weather {"city":"Oslo"}',
      'result sunny',
      'assistant: It is sunny.',
      'user: a question nobody answered',
    ];
    expect(added.data.map(gist)).toEqual(appended);
    // No model was called; the items list as they were added, with the ids they were answered with.
    expect(server.stub.requests.length).toBe(before);
    const listed = (await client.conversations.items.list(conversation.id, { order: 'asc' })).data;
    expect(listed).toEqual(added.data);
    // The web app's transcript: each item once, complete, no empty or cancelled answer after a user message.
    const threadId = conversation.id
      .slice('conv_'.length)
      .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
    const response = await server.app.api(`/api/threads/${threadId}/messages`, { token: server.token });
    const messages = (
      (await response.json()) as { messages: { role: string; content: string; status: string; seq: number }[] }
    ).messages;
    expect(messages.map((message) => [message.role, message.content, message.status])).toEqual([
      ['user', 'appended question', 'complete'],
      ['assistant', 'Let me check.', 'complete'],
      ['tool', 'sunny', 'complete'],
      ['assistant', 'It is sunny.', 'complete'],
      ['user', 'a question nobody answered', 'complete'],
    ]);
    expect(messages.map((message) => message.seq)).toEqual([1, 2, 3, 4, 5]);
    // The opening items title the thread in the web app's list, as a first exchange does.
    const title = async () => {
      const thread = await server.app.api(`/api/threads/${threadId}`, { token: server.token });
      return ((await thread.json()) as { title: string }).title;
    };
    await waitFor(async () => /appended question/i.test(await title()), { timeoutMs: 20_000, what: 'the title' });
    // A response in the conversation goes on from them: the model sees them all, the unanswered question included.
    await client.responses.create({ model: 'gpt-4o-mini', input: 'next one', conversation: conversation.id });
    const pack = chatRequests(server).at(-1)!.body.messages;
    expect(pack.map((message) => message.role).slice(1)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'user',
    ]);
    expect(pack.map((message) => wireContentText(message.content))).toEqual(
      expect.arrayContaining(['appended question', 'sunny', 'It is sunny.', 'a question nobody answered', 'next one']),
    );
    expect((await client.conversations.items.list(conversation.id)).data.map(gist).slice(0, 2)).toEqual([
      'assistant: stub reply to: next one',
      'user: next one',
    ]);
  });

  it('a conversation may start with user and assistant items; refusals store nothing', async () => {
    const client = openaiClient(server);
    const conversation = await client.conversations.create({
      items: [
        { type: 'message', role: 'developer', content: 'Be brief.' },
        { type: 'message', role: 'user', content: 'opening question' },
        { type: 'message', role: 'assistant', content: 'opening answer' },
      ],
    });
    const items = async () => (await client.conversations.items.list(conversation.id, { order: 'asc' })).data.map(gist);
    expect(await items()).toEqual(['user: opening question', 'assistant: opening answer']);
    const refusals: [OpenAI.Conversations.ItemCreateParams['items'], number, string][] = [
      [[{ type: 'message', role: 'developer', content: 'new rules' }], 400, 'items'],
      [[{ type: 'message', role: 'user', content: '   ' }], 400, 'items.0'],
      [[{ type: 'function_call', call_id: 'c', name: 'f', arguments: '[1]' }], 400, 'items.0'],
      [[{ type: 'message', role: 'user', content: 'x'.repeat(200_000) }], 413, 'items.0'],
      [
        Array.from({ length: 21 }, () => ({ type: 'message' as const, role: 'user' as const, content: 'x' })),
        400,
        'items',
      ],
      [[], 400, 'items'],
    ];
    for (const [refused, status, param] of refusals)
      await expect(client.conversations.items.create(conversation.id, { items: refused })).rejects.toMatchObject({
        status,
        param,
      });
    // A conversation whose starting items are refused is not made.
    const threads = async () =>
      ((await (await server.app.api('/api/threads', { token: server.token })).json()) as { threads: unknown[] }).threads
        .length;
    const before = await threads();
    for (const [refused] of refusals.slice(1, 5))
      await expect(client.conversations.create({ items: refused })).rejects.toMatchObject({
        status: expect.any(Number),
      });
    expect(await threads()).toBe(before);
    const stranger = openaiClient(server, { apiKey: (await server.guest()).token });
    await expect(
      stranger.conversations.items.create(conversation.id, {
        items: [{ type: 'message', role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 404 });
    expect(await items()).toEqual(['user: opening question', 'assistant: opening answer']);
  });

  it('is refused with 409 while an answer in the conversation is being written', async () => {
    const client = openaiClient(server);
    const conversation = await client.conversations.create({});
    server.stub.setResponder((request) =>
      replyWithText(`slow reply to: ${lastUserText(request.body)}`, { firstByteDelayMs: 1500 }),
    );
    try {
      const slow = client.responses.create({
        model: 'gpt-4o-mini',
        input: 'slow question',
        conversation: conversation.id,
      });
      const started = Date.now();
      while (
        server.stub.requests
          .at(-1)
          ?.body.messages.every((message) => wireContentText(message.content) !== 'slow question')
      ) {
        if (Date.now() - started > 10_000) throw new Error('the slow turn never reached the stub');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await expect(
        client.conversations.items.create(conversation.id, {
          items: [{ type: 'message', role: 'user', content: 'squeezed in' }],
        }),
      ).rejects.toMatchObject({ status: 409 });
      expect((await slow).output_text).toBe('slow reply to: slow question');
    } finally {
      server.stub.setResponder(chat);
    }
    const listed = (await client.conversations.items.list(conversation.id, { order: 'asc' })).data.map(gist);
    expect(listed).toEqual(['user: slow question', 'assistant: slow reply to: slow question']);
  });
});
