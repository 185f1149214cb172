import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import type { MessageDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, type StubResponder } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { chatRequests, openaiClient, requestText, SERVICE_KEY, streamTurn } from './facade-kit';

/** Echoes the user; asked for "the code", answers with every CODE-n its pack holds (summary, window or recall). */
const chat: StubResponder = (request) => {
  const last = lastUserText(request.body);
  if (/which code/i.test(last)) {
    const codes = [...new Set(requestText(request).match(/CODE-\d+/g) ?? [])];
    return replyWithText(`The codes I know: ${codes.join(', ') || 'none'}.`);
  }
  return replyWithText(`stub reply to: ${last}`, { chunks: ['stub reply ', `to: ${last}`] });
};

const server = useChatServer({
  stub: { classifyRequest, responder: summaryResponder({ chat }), promptCache: true },
  env: {
    SUMMARY_TRIGGER: 'messages=8',
    SUMMARY_KEEP: 'messages=4',
    RECALL_TOKENS: '0',
    OPENAI_FACADE_KEYS: SERVICE_KEY,
    FACADE_MODEL_ALIASES: 'split-store',
  },
});

async function threadMessages(threadId: string, token = server.token): Promise<MessageDto[]> {
  const response = await server.app.api(`/api/threads/${threadId}/messages?limit=200`, { token });
  expect(response.status).toBe(200);
  return ((await response.json()) as { messages: MessageDto[] }).messages;
}

describe('the OpenAI-compatible front door with the official SDK', () => {
  it('lists CHAT_MODEL and its aliases', async () => {
    const models = await openaiClient(server).models.list();
    expect(models.data.map((model) => model.id)).toEqual(['gpt-4o-mini', 'split-store']);
    // A service key lists them without naming an end user (a UI checks its connection so).
    const viaKey = await openaiClient(server, { apiKey: SERVICE_KEY }).models.list();
    expect(viaKey.data.map((model) => model.id)).toEqual(['gpt-4o-mini', 'split-store']);
    await expect(openaiClient(server).models.retrieve('gpt-9')).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
    });
  });

  it(
    'a 30-turn chat sending its whole history: answers as the model streamed them, bounded packs with the summary, one thread',
    { timeout: 120_000 },
    async () => {
      const client = openaiClient(server);
      const headers = { 'X-Thread-Id': 'long-chat-1' };
      const history: ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are terse.' }];
      let threadId: string | null = null;
      server.stub.reset();
      for (let turn = 1; turn <= 30; turn += 1) {
        const text =
          turn === 1 ? 'Remember the code CODE-4711 for later.' : `Message number ${turn} about the weather.`;
        const result = await streamTurn(client, history, text, headers);
        expect(result.answer).toBe(`stub reply to: ${text}`);
        threadId ??= result.threadId;
        expect(result.threadId).toBe(threadId);
        // Usage is what the upstream model reported for the pack, not the client's history.
        const upstream = chatRequests(server).at(-1);
        expect(result.usage?.prompt_tokens).toBe(upstream?.promptTokens);
        // And the cached part the upstream reported (OpenAI's way: from 1,024 tokens on, in 128-token steps).
        expect(result.usage?.prompt_tokens_details?.cached_tokens).toBe(upstream?.cachedTokens);
        history.push({ role: 'user', content: text }, { role: 'assistant', content: result.answer });
      }
      const final = await streamTurn(client, history, 'Which code did I give you at the start?', headers);
      expect(final.answer).toContain('CODE-4711');
      const packs = chatRequests(server);
      // No upstream request was rejected (the stub refuses what OpenAI refuses, an overlong prompt included).
      expect(
        server.stub.requests.filter((request) => request.rejection !== undefined || (request.status ?? 200) >= 400),
      ).toEqual([]);
      // The client sent up to 62 messages; the model got bounded packs, later ones with the summary.
      expect(Math.max(...packs.map((request) => request.body.messages.length))).toBeLessThanOrEqual(16);
      expect(requestText(packs.at(-1)!)).toContain('Identifiers: CODE-4711');
      expect(
        packs
          .at(-1)!
          .body.messages.some(
            (message) => message.role === 'user' && /Remember the code/.test(String(message.content)),
          ),
      ).toBe(false);
      // The client's system message is kept after our system prefix.
      expect(String(packs.at(-1)!.body.messages[0]?.content)).toContain('You are terse.');
      // One thread in the REST history, holding every message once.
      const threads = (await (await server.app.api('/api/threads', { token: server.token })).json()) as {
        threads: { id: string }[];
      };
      expect(threads.threads.map((thread) => thread.id)).toContain(threadId);
      const messages = await threadMessages(threadId!);
      const users = messages.filter((message) => message.role === 'user').map((message) => message.content);
      expect(users).toHaveLength(31);
      expect(new Set(users).size).toBe(31);
      expect(messages.filter((message) => message.role === 'assistant' && message.status === 'complete')).toHaveLength(
        31,
      );
    },
  );

  it("reports the upstream's cached prompt tokens in usage, as OpenAI does", async () => {
    const client = openaiClient(server);
    const headers = { 'X-Thread-Id': 'cached-usage-1' };
    // Long client instructions keep the pack over the 1,024 tokens from which a provider caches; they sit after our
    // system prefix and stay the same from call to call, so the second call reuses the first's prompt.
    const history: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'Follow the house style guide closely. '.repeat(200) },
    ];
    const cached: (number | undefined)[] = [];
    for (const text of [
      'First question about the garden.',
      'Second question about the garden.',
      'Third question about the garden.',
    ]) {
      const result = await streamTurn(client, history, text, headers);
      const upstream = chatRequests(server).at(-1);
      expect(result.usage?.prompt_tokens_details?.cached_tokens).toBe(upstream?.cachedTokens);
      cached.push(result.usage?.prompt_tokens_details?.cached_tokens);
      history.push({ role: 'user', content: text }, { role: 'assistant', content: result.answer });
    }
    expect(cached[0]).toBe(0);
    expect(cached[1]).toBeGreaterThanOrEqual(1024);
    expect(cached[2]).toBeGreaterThanOrEqual(cached[1] ?? 0);
  });

  it('answers without streaming as a chat.completion with usage', async () => {
    const client = openaiClient(server);
    const completion = await client.chat.completions.create(
      { model: 'split-store', messages: [{ role: 'user', content: 'plain request' }] },
      { headers: { 'X-Thread-Id': 'plain-1' } },
    );
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('split-store');
    expect(completion.choices[0]?.message.content).toBe('stub reply to: plain request');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.prompt_tokens).toBe(chatRequests(server).at(-1)?.promptTokens);
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('an edited history answers on a branch without the later original turns; the original keeps every message; the next request follows the branch', async () => {
    const client = openaiClient(server);
    const headers = { 'X-Thread-Id': 'edit-chat' };
    const history: ChatCompletionMessageParam[] = [];
    let original: string | null = null;
    for (const text of ['first question', 'second question', 'third question']) {
      const result = await streamTurn(client, history, text, headers);
      original ??= result.threadId;
      history.push({ role: 'user', content: text }, { role: 'assistant', content: result.answer });
    }
    server.stub.reset();
    const edited = await streamTurn(client, history.slice(0, 2), 'second question, edited', headers);
    expect(edited.answer).toBe('stub reply to: second question, edited');
    expect(edited.threadId).not.toBe(original);
    const pack = requestText(chatRequests(server)[0]!);
    expect(pack).toContain('second question, edited');
    expect(pack).toContain('first question');
    expect(pack).not.toContain('third question');
    expect(pack).not.toMatch(/second question(?!, edited)/);
    expect((await threadMessages(original!)).map((message) => message.content)).toEqual([
      'first question',
      'stub reply to: first question',
      'second question',
      'stub reply to: second question',
      'third question',
      'stub reply to: third question',
    ]);
    const branchHistory: ChatCompletionMessageParam[] = [
      ...history.slice(0, 2),
      { role: 'user', content: 'second question, edited' },
      { role: 'assistant', content: edited.answer },
    ];
    const next = await streamTurn(client, branchHistory, 'on the branch', headers);
    expect(next.threadId).toBe(edited.threadId);
    // And the original branch is still reachable by its own history.
    const back = await streamTurn(client, history, 'back on the original', headers);
    expect(back.threadId).toBe(original);
  });

  it('a history ending with an answered user message is a regeneration: the old answer is superseded', async () => {
    const client = openaiClient(server);
    const headers = { 'X-Thread-Id': 'regen-chat' };
    const first = await streamTurn(client, [], 'regenerate me', headers);
    let count = 0;
    server.stub.setResponder((request) =>
      request.kind === 'chat' ? replyWithText(`another answer ${++count}`) : summaryResponder()(request),
    );
    try {
      const again = await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'regenerate me' }] },
        { headers },
      );
      expect(again.choices[0]?.message.content).toBe('another answer 1');
    } finally {
      server.stub.reset();
    }
    const messages = await threadMessages(first.threadId!);
    expect(messages.filter((message) => message.role === 'user')).toHaveLength(1);
    expect(messages.find((message) => message.content === first.answer)?.superseded).toBe(true);
    expect(messages.at(-1)?.content).toBe('another answer 1');
  });

  it('two users of a service key with the same conversation id reach nothing of each other', async () => {
    const alice = openaiClient(server, { apiKey: SERVICE_KEY, headers: { 'X-User-Id': 'alice' } });
    const bob = openaiClient(server, { apiKey: SERVICE_KEY, headers: { 'X-User-Id': 'bob' } });
    const headers = { 'X-Thread-Id': 'shared-id' };
    const fromAlice = await streamTurn(alice, [], 'alice secret ALPHA-1', headers);
    server.stub.reset();
    // Bob replays Alice's history under the same id: it is not his conversation (her thread is not found for him), so
    // the answer he would continue is one this server never gave him: refused, nothing stored.
    const aliceHistory: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'alice secret ALPHA-1' },
      { role: 'assistant', content: fromAlice.answer },
    ];
    await expect(streamTurn(bob, aliceHistory, 'bob here', headers)).rejects.toMatchObject({ status: 400 });
    const bobsOwn = await streamTurn(bob, [], 'bob here', headers);
    expect(bobsOwn.threadId).not.toBe(fromAlice.threadId);
    expect(chatRequests(server).map(requestText).join('\n')).not.toContain('ALPHA-1');
    // The body's `user` names the end user too (Open WebUI may send it instead of a header).
    const viaBody = openaiClient(server, { apiKey: SERVICE_KEY });
    const carol = await viaBody.chat.completions.create(
      { model: 'gpt-4o-mini', user: 'carol', messages: [{ role: 'user', content: 'carol here' }] },
      { headers },
    );
    expect(carol.choices[0]?.message.content).toBe('stub reply to: carol here');
  });

  it("answers every refusal in OpenAI's error shape", async () => {
    const client = openaiClient(server);
    await expect(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [] })).rejects.toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      param: 'messages',
    });
    await expect(
      openaiClient(server, { apiKey: 'not-a-token' }).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    await expect(openaiClient(server, { apiKey: 'not-a-token' }).models.list()).rejects.toMatchObject({ status: 401 });
    await expect(
      client.chat.completions.create({ model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    await expect(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'wizard', content: 'x' } as never] }),
    ).rejects.toMatchObject({ status: 400, param: 'messages.0.role' });
    await expect(
      client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: 'nope', content: 'y' },
        ],
      }),
    ).rejects.toMatchObject({ status: 400, param: 'messages.1.tool_call_id' });
    await expect(
      client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'calculator', parameters: { type: 'object', properties: {} } } }],
      }),
    ).rejects.toMatchObject({
      status: 400,
      param: 'tools.0.function.name',
      message: expect.stringContaining('calculator'),
    });
    await expect(
      openaiClient(server, { apiKey: SERVICE_KEY }).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 400, param: 'user' });
    const tooBig = await server.app.api('/v1/chat/completions', {
      method: 'POST',
      token: server.token,
      json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(11 * 1024 * 1024) }] },
    });
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'request_too_large' } });
    const unknownRoute = await server.app.api('/v1/embeddings', { method: 'POST', token: server.token, json: {} });
    expect(unknownRoute.status).toBe(404);
    expect(await unknownRoute.json()).toMatchObject({ error: { type: 'invalid_request_error', param: null } });
    // Nothing was stored by any refusal: no thread holds an "x".
    const threads = (await (await server.app.api('/api/threads', { token: server.token })).json()) as {
      threads: { title: string }[];
    };
    expect(threads.threads.some((thread) => thread.title === 'x')).toBe(false);
  });
});
