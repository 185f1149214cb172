import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, replyWithToolCalls, type StubResponder } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { anthropicClient, CLAUDE_MODEL, textOf, threadMessages, threadOf } from './anthropic-kit';
import { chatRequests, requestText, SERVICE_KEY } from './facade-kit';

/**
 * Echoes the user; asked for "the code", answers with every CODE-n its pack holds; asked about the weather with
 * get_weather offered, calls it, and answers from its result.
 */
const chat: StubResponder = (request) => {
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool') return replyWithText(`The weather: ${wireContentText(last.content)}`);
  const text = lastUserText(request.body);
  if (/which code/i.test(text)) {
    const codes = [...new Set(requestText(request).match(/CODE-\d+/g) ?? [])];
    return replyWithText(`The codes I know: ${codes.join(', ') || 'none'}.`);
  }
  if (/weather/i.test(text) && (request.body.tools ?? []).some((tool) => tool.function.name === 'get_weather'))
    return replyWithToolCalls([{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Oslo' } }], {
      text: 'Let me check.',
    });
  // A long answer, word by word: a max_tokens stop takes effect while it streams.
  if (text.startsWith('tell me'))
    return replyWithText(`stub reply to: ${text}`, {
      chunks: `stub reply to: ${text}`.split(/(?<= )/),
      chunkDelayMs: 20,
    });
  return replyWithText(`stub reply to: ${text}`, { chunks: ['stub reply ', `to: ${text}`] });
};

const server = useChatServer({
  stub: { classifyRequest, responder: summaryResponder({ chat }), promptCache: true },
  env: {
    SUMMARY_TRIGGER: 'messages=8',
    SUMMARY_KEEP: 'messages=4',
    RECALL_TOKENS: '0',
    OPENAI_FACADE_KEYS: SERVICE_KEY,
    FACADE_MODEL_ALIASES: CLAUDE_MODEL,
  },
});

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('the Anthropic front door with the official SDK', () => {
  it('messages.create: the answer as a message with end_turn and the usage of the pack the upstream saw', async () => {
    const client = anthropicClient(server);
    const { data: message, response } = await client.messages
      .create(
        {
          model: CLAUDE_MODEL,
          max_tokens: 1024,
          system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
          messages: [{ role: 'user', content: 'plain request' }],
        },
        { headers: { 'X-Thread-Id': 'create-1' } },
      )
      .withResponse();
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: CLAUDE_MODEL,
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'stub reply to: plain request' }],
    });
    const upstream = chatRequests(server).at(-1)!;
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBe(upstream.promptTokens);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.usage.cache_creation_input_tokens).toBe(0);
    // `system` is the client's instructions, after our system prefix.
    expect(String(upstream.body.messages[0]?.content)).toContain('You are terse.');
    expect(response.headers.get('x-chat-thread-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('request-id')).toBeTruthy();
  });

  it('messages.stream: text deltas as the model writes, then the final message with its stop reason and usage', async () => {
    const client = anthropicClient(server);
    const stream = client.messages.stream(
      { model: CLAUDE_MODEL, max_tokens: 1024, messages: [{ role: 'user', content: 'streamed request' }] },
      { headers: { 'X-Thread-Id': 'stream-1' } },
    );
    const deltas: string[] = [];
    const events: string[] = [];
    stream.on('text', (text) => deltas.push(text));
    stream.on('streamEvent', (event) => events.push(event.type));
    const final = await stream.finalMessage();
    expect(deltas.join('')).toBe('stub reply to: streamed request');
    expect(textOf(final)).toBe('stub reply to: streamed request');
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.input_tokens).toBe(chatRequests(server).at(-1)!.promptTokens);
    expect(events[0]).toBe('message_start');
    expect(events).toContain('content_block_delta');
    expect(events.slice(-2)).toEqual(['message_delta', 'message_stop']);
    // The SDK drops `ping` events; on the wire each event is an `event:` and a `data:` line, a ping after message_start.
    const raw = await fetch(`${server.app.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': server.token, 'content-type': 'application/json', 'X-Thread-Id': 'stream-raw-1' },
      body: JSON.stringify({
        model: CLAUDE_MODEL,
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'raw stream' }],
      }),
    });
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const wire = await raw.text();
    expect(wire.split('\n\n', 2)[1]).toBe('event: ping\ndata: {"type":"ping"}');
    expect(wire).toContain('event: message_stop\ndata: {"type":"message_stop"}');
  });

  it("reports the upstream's cached prompt tokens as cache_read_input_tokens, the rest as input_tokens", async () => {
    const client = anthropicClient(server);
    const headers = { 'X-Thread-Id': 'cached-usage-1' };
    // Long instructions keep the pack over the 1,024 tokens from which the stub's upstream caches a prefix.
    const system = 'Follow the house style guide closely. '.repeat(200);
    const history: Anthropic.MessageParam[] = [];
    const reads: number[] = [];
    for (const text of ['First question about the garden.', 'Second question about the garden.']) {
      history.push({ role: 'user', content: text });
      const answer = await client.messages.create(
        { model: CLAUDE_MODEL, max_tokens: 256, system, messages: history },
        { headers },
      );
      const upstream = chatRequests(server).at(-1)!;
      expect(answer.usage.cache_read_input_tokens).toBe(upstream.cachedTokens);
      expect(answer.usage.input_tokens).toBe(upstream.promptTokens - (upstream.cachedTokens ?? 0));
      reads.push(answer.usage.cache_read_input_tokens ?? 0);
      history.push({ role: 'assistant', content: answer.content });
    }
    expect(reads[0]).toBe(0);
    expect(reads[1]).toBeGreaterThanOrEqual(1024);
  });

  it('messages.countTokens: the pack a new conversation would send, growing with the messages', async () => {
    const client = anthropicClient(server);
    const short = await client.messages.countTokens({
      model: CLAUDE_MODEL,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const long = await client.messages.countTokens({
      model: CLAUDE_MODEL,
      system: 'Follow the house style guide closely. '.repeat(20),
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'hello '.repeat(200) }],
    });
    expect(short.input_tokens).toBeGreaterThan(0);
    // Our system prefix and our tools are in the pack too: more than the message alone.
    expect(short.input_tokens).toBeGreaterThan(10);
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 200);
  });

  it(
    'a 30-turn chat resending its whole history: one thread, each message once, bounded packs with the summary',
    { timeout: 120_000 },
    async () => {
      const client = anthropicClient(server);
      const headers = { 'X-Thread-Id': 'long-chat-1' };
      const history: Anthropic.MessageParam[] = [];
      let threadId: string | null = null;
      server.stub.reset();
      for (let turn = 1; turn <= 30; turn += 1) {
        const text = turn === 1 ? 'Remember the code CODE-4711 for later.' : `Message number ${turn} about the sea.`;
        history.push({ role: 'user', content: text });
        const stream = client.messages.stream(
          { model: CLAUDE_MODEL, max_tokens: 512, system: 'Be brief.', messages: history },
          { headers },
        );
        const final = await stream.finalMessage();
        const { response } = await stream.withResponse();
        threadId ??= response.headers.get('x-chat-thread-id');
        expect(response.headers.get('x-chat-thread-id')).toBe(threadId);
        expect(textOf(final)).toBe(`stub reply to: ${text}`);
        history.push({ role: 'assistant', content: final.content });
      }
      history.push({ role: 'user', content: 'Which code did I give you at the start?' });
      const last = await client.messages.create(
        { model: CLAUDE_MODEL, max_tokens: 512, messages: history },
        { headers },
      );
      expect(textOf(last)).toContain('CODE-4711');
      const packs = chatRequests(server);
      expect(Math.max(...packs.map((request) => request.body.messages.length))).toBeLessThanOrEqual(16);
      expect(requestText(packs.at(-1)!)).toContain('Identifiers: CODE-4711');
      const messages = await threadMessages(server, threadId!);
      const users = messages.filter((message) => message.role === 'user').map((message) => message.content);
      expect(users).toHaveLength(31);
      expect(new Set(users).size).toBe(31);
    },
  );

  it('an edited history answers on a fork; the original keeps its messages', async () => {
    const client = anthropicClient(server);
    const headers = { 'X-Thread-Id': 'edit-1' };
    const history: Anthropic.MessageParam[] = [];
    let threadId: string | null = null;
    for (const text of ['first question', 'second question']) {
      history.push({ role: 'user', content: text });
      const { data, response } = await client.messages
        .create({ model: CLAUDE_MODEL, max_tokens: 256, messages: history }, { headers })
        .withResponse();
      threadId = response.headers.get('x-chat-thread-id');
      history.push({ role: 'assistant', content: data.content });
    }
    const edited: Anthropic.MessageParam[] = [...history.slice(0, 2), { role: 'user', content: 'second, edited' }];
    const { data, response } = await client.messages
      .create({ model: CLAUDE_MODEL, max_tokens: 256, messages: edited }, { headers })
      .withResponse();
    expect(textOf(data)).toBe('stub reply to: second, edited');
    const forkId = response.headers.get('x-chat-thread-id');
    expect(forkId).not.toBe(threadId);
    expect((await threadOf(server, forkId!))?.forkedFrom?.threadId).toBe(threadId);
    expect((await threadMessages(server, threadId!)).map((message) => message.content)).toEqual([
      'first question',
      'stub reply to: first question',
      'second question',
      'stub reply to: second question',
    ]);
  });

  it('client tools: the model calls one as tool_use (stop_reason tool_use); the tool_result sent next goes on', async () => {
    const client = anthropicClient(server);
    const headers = { 'X-Thread-Id': 'weather-1' };
    const question: Anthropic.MessageParam = { role: 'user', content: 'Weather in Oslo?' };
    const first = await client.messages.create(
      { model: CLAUDE_MODEL, max_tokens: 256, tools: [weatherTool], messages: [question] },
      { headers },
    );
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'call_w1', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    // Offered with ours.
    const offered = (chatRequests(server).at(-1)?.body.tools ?? []).map((tool) => tool.function.name);
    expect(offered).toEqual(expect.arrayContaining(['get_weather', 'calculator']));

    const stream = client.messages.stream(
      {
        model: CLAUDE_MODEL,
        max_tokens: 256,
        tools: [weatherTool],
        messages: [
          question,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_w1', content: 'rainy, 7 degrees' }] },
        ],
      },
      { headers },
    );
    const second = await stream.finalMessage();
    expect(textOf(second)).toBe('The weather: rainy, 7 degrees');
    expect(second.stop_reason).toBe('end_turn');
    const { response } = await stream.withResponse();
    const messages = await threadMessages(server, response.headers.get('x-chat-thread-id')!);
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Weather in Oslo?'],
      ['assistant', 'Let me check.'],
      ['tool', 'rainy, 7 degrees'],
      ['assistant', 'The weather: rainy, 7 degrees'],
    ]);
  });

  it('a streamed tool call comes as a tool_use block with its input in an input_json_delta', async () => {
    const client = anthropicClient(server);
    const stream = client.messages.stream(
      {
        model: CLAUDE_MODEL,
        max_tokens: 256,
        tools: [weatherTool],
        messages: [{ role: 'user', content: 'Weather in Oslo, streamed?' }],
      },
      { headers: { 'X-Thread-Id': 'weather-stream-1' } },
    );
    const partials: string[] = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content.at(-1)).toEqual({
      type: 'tool_use',
      id: 'call_w1',
      name: 'get_weather',
      input: { city: 'Oslo' },
    });
    expect(partials.join('')).toBe('{"city":"Oslo"}');
  });

  it('max_tokens cuts the answer: stop_reason max_tokens, and the cut answer still matches the next history', async () => {
    const client = anthropicClient(server);
    const headers = { 'X-Thread-Id': 'capped-1' };
    const long = `tell me ${'many words '.repeat(40)}`;
    const capped = await client.messages.create(
      { model: CLAUDE_MODEL, max_tokens: 5, messages: [{ role: 'user', content: long }] },
      { headers },
    );
    expect(capped.stop_reason).toBe('max_tokens');
    const text = textOf(capped);
    expect(text.length).toBeGreaterThan(0);
    expect(`stub reply to: ${long}`.startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(40);
    const { data: next, response } = await client.messages
      .create(
        {
          model: CLAUDE_MODEL,
          max_tokens: 256,
          messages: [
            { role: 'user', content: long },
            { role: 'assistant', content: capped.content },
            { role: 'user', content: 'go on' },
          ],
        },
        { headers },
      )
      .withResponse();
    expect(textOf(next)).toBe('stub reply to: go on');
    const messages = await threadMessages(server, response.headers.get('x-chat-thread-id')!);
    expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      long,
      'go on',
    ]);
  });

  it('max_tokens cuts a streamed answer too', async () => {
    const client = anthropicClient(server);
    const long = `tell me, streamed, ${'many words '.repeat(40)}`;
    const stream = client.messages.stream(
      { model: CLAUDE_MODEL, max_tokens: 5, messages: [{ role: 'user', content: long }] },
      { headers: { 'X-Thread-Id': 'capped-stream-1' } },
    );
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('max_tokens');
    const text = textOf(final);
    expect(text.length).toBeGreaterThan(0);
    expect(`stub reply to: ${long}`.startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(40);
  });

  it('a service key names the end user with X-User-Id or metadata.user_id; the key may come as x-api-key', async () => {
    const viaHeader = anthropicClient(server, { apiKey: SERVICE_KEY, headers: { 'X-User-Id': 'claude-user-1' } });
    const first = await viaHeader.messages
      .create(
        { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hello from a service' }] },
        { headers: { 'X-Thread-Id': 'svc-1' } },
      )
      .withResponse();
    const viaMetadata = anthropicClient(server, { apiKey: SERVICE_KEY });
    const second = await viaMetadata.messages
      .create(
        {
          model: CLAUDE_MODEL,
          max_tokens: 64,
          metadata: { user_id: 'claude-user-1' },
          messages: [
            { role: 'user', content: 'hello from a service' },
            { role: 'assistant', content: first.data.content },
            { role: 'user', content: 'again' },
          ],
        },
        { headers: { 'X-Thread-Id': 'svc-1' } },
      )
      .withResponse();
    expect(second.response.headers.get('x-chat-thread-id')).toBe(first.response.headers.get('x-chat-thread-id'));
    await expect(
      viaMetadata.messages.create({ model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error' } } });
  });

  it('another user reaches nothing of the first: the same conversation key is their own thread', async () => {
    const client = anthropicClient(server);
    const headers = { 'X-Thread-Id': 'private-1' };
    const mine = await client.messages
      .create(
        { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'my secret is CODE-9001' }] },
        { headers },
      )
      .withResponse();
    const myThread = mine.response.headers.get('x-chat-thread-id')!;
    const stranger = await server.guest();
    const theirClient = anthropicClient(server, { authToken: stranger.token });
    // Resending the first user's history under the same key: answers this server never gave them, refused.
    await expect(
      theirClient.messages.create(
        {
          model: CLAUDE_MODEL,
          max_tokens: 64,
          messages: [
            { role: 'user', content: 'my secret is CODE-9001' },
            { role: 'assistant', content: mine.data.content },
            { role: 'user', content: 'Which code did I give you?' },
          ],
        },
        { headers },
      ),
    ).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const theirs = await theirClient.messages
      .create(
        { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Which code did I give you?' }] },
        { headers },
      )
      .withResponse();
    expect(textOf(theirs.data)).toBe('The codes I know: none.');
    expect(theirs.response.headers.get('x-chat-thread-id')).not.toBe(myThread);
    expect(await threadOf(server, myThread, stranger.token)).toBeNull();
    // Their copy of the history is theirs: our thread is untouched.
    expect((await threadMessages(server, myThread)).map((message) => message.content)).toEqual([
      'my secret is CODE-9001',
      'stub reply to: my secret is CODE-9001',
    ]);
  });
});

describe('errors in Anthropic shape through the SDK', () => {
  it('a missing max_tokens, an image block, and a body that is not JSON are invalid_request_error (400)', async () => {
    const client = anthropicClient(server);
    const noMax = client.messages.create({
      model: CLAUDE_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    await expect(noMax).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(noMax).rejects.toMatchObject({
      error: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/^max_tokens/) } },
      requestID: expect.any(String),
    });
    const image = client.messages.create({
      model: CLAUDE_MODEL,
      max_tokens: 64,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
    });
    await expect(image).rejects.toMatchObject({
      status: 400,
      error: {
        error: { type: 'invalid_request_error', message: expect.stringContaining('messages.0.content.1.type') },
      },
    });
    const raw = await fetch(`${server.app.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': server.token, 'content-type': 'application/json' },
      body: '{"model": ',
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('no key or a wrong one is authentication_error (401); an unknown model or route not_found_error (404)', async () => {
    const wrong = anthropicClient(server, { apiKey: 'not-a-token' });
    await expect(
      wrong.messages.create({ model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const none = await fetch(`${server.app.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const client = anthropicClient(server);
    const unknown = client.messages.create({
      model: 'claude-unknown',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await expect(unknown).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(unknown).rejects.toMatchObject({ error: { error: { type: 'not_found_error' } } });
    await expect(client.messages.batches.list()).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });
});
