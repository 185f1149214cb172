import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { echoResponder, replyWithError, replyWithText, type StubResponder } from '../support/openai-stub';
import type { MessageDto } from '../../src/shared/api';
import type { ChatServer } from '../support/chat-server';
import { chatRequests, openaiClient } from './facade-kit';
import { waitFor } from '../support/wait-for';
import { createDatabase } from '../../src/db/prisma-client';

/** Holds chat answers while `held` is set (to catch a conversation mid-answer); "fail" makes the upstream fail; "story" streams slowly. */
const gate = { held: null as Promise<void> | null, open: () => {} };
const STORY = ['Once ', 'upon ', 'a ', 'time ', 'there ', 'was ', 'a ', 'very ', 'long ', 'story.'];
const responder: StubResponder = async (request) => {
  if (/fail/.test(JSON.stringify(request.body.messages.at(-1))))
    return replyWithError(500, { message: 'upstream exploded' });
  if (/held story/.test(JSON.stringify(request.body.messages.at(-1))) && gate.held) await gate.held;
  if (/story/.test(JSON.stringify(request.body.messages.at(-1))))
    return replyWithText(STORY.join(''), { chunks: STORY, chunkDelayMs: 150 });
  if (gate.held) await gate.held;
  return echoResponder(request);
};

const server = useChatServer({ stub: { responder }, env: { RATE_LIMIT_PER_MINUTE: '3', MAX_MESSAGE_CHARS: '200' } });

async function freshClient(chat: ChatServer) {
  const guest = await chat.guest();
  return openaiClient(chat, { apiKey: guest.token });
}

describe('limits of the OpenAI-compatible route', () => {
  it('the send rate limit: 429 rate_limit_exceeded with Retry-After, nothing stored', async () => {
    const client = await freshClient(server);
    for (let index = 0; index < 3; index += 1) {
      await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `message ${index}` }] },
        { headers: { 'X-Thread-Id': `rate-${index}` } },
      );
    }
    const refused = await client.chat.completions
      .create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one too many' }] },
        { headers: { 'X-Thread-Id': 'rate-x' } },
      )
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(APIError);
    expect(refused).toMatchObject({ status: 429, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' });
    expect(Number((refused as APIError).headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(chatRequests(server).some((request) => JSON.stringify(request.body).includes('one too many'))).toBe(false);
  });

  it('MAX_MESSAGE_CHARS as on REST: 413', async () => {
    const client = await freshClient(server);
    await expect(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'y'.repeat(201) }] }),
    ).rejects.toMatchObject({ status: 413, code: 'request_too_large' });
  });

  it("a second request while the conversation's answer is being written: a retryable 429 busy with Retry-After, and the first answer still arrives", async () => {
    const client = await freshClient(server);
    const headers = { 'X-Thread-Id': 'busy-1' };
    gate.held = new Promise((resolve) => {
      gate.open = resolve;
    });
    const before = server.stub.requests.length;
    const first = client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow question' }] },
      { headers },
    );
    try {
      await waitFor(() => server.stub.requests.length > before);
      const again = await client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow question' }] }, { headers })
        .catch((error: unknown) => error);
      expect(again).toMatchObject({ status: 429, code: 'busy' });
      expect((again as APIError).headers?.get('retry-after')).toBe('1');
    } finally {
      gate.held = null;
      gate.open();
    }
    expect((await first).choices[0]?.message.content).toBe('stub reply to: slow question');
  });

  it("an upstream failure: 502 as JSON, and the stream's last event when streaming", async () => {
    const client = await freshClient(server);
    await expect(
      client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'please fail' }] },
        { headers: { 'X-Thread-Id': 'fail-json' } },
      ),
    ).rejects.toMatchObject({ status: 502, code: 'upstream_error', type: 'api_error' });
    const stream = await client.chat.completions.create(
      { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'please fail again' }] },
      { headers: { 'X-Thread-Id': 'fail-stream' } },
    );
    const consume = async () => {
      for await (const chunk of stream) void chunk;
    };
    await expect(consume()).rejects.toMatchObject({ error: { code: 'upstream_error', type: 'api_error' } });
  });

  it('a client that stops reading stops the answer; its next request with the part it got goes on in the same thread', async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const headers = { 'X-Thread-Id': 'stopped' };
    const controller = new AbortController();
    const { data: stream, response } = await client.chat.completions
      .create(
        { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'tell a story' }] },
        { headers, signal: controller.signal },
      )
      .withResponse();
    const threadId = response.headers.get('x-chat-thread-id');
    let partial = '';
    await (async () => {
      for await (const chunk of stream) {
        partial += chunk.choices[0]?.delta.content ?? '';
        if (partial.length > 'Once upon'.length) controller.abort();
      }
    })().catch(() => undefined);
    expect(partial.length).toBeLessThan(STORY.join('').length);
    let answer: MessageDto | undefined;
    await waitFor(async () => {
      const messages = (
        (await (await server.app.api(`/api/threads/${threadId}/messages`, { token: guest.token })).json()) as {
          messages: MessageDto[];
        }
      ).messages;
      answer = messages.find((message) => message.role === 'assistant');
      return answer?.status === 'cancelled';
    });
    expect(answer?.content.length).toBeLessThan(STORY.join('').length);
    const next = await client.chat.completions
      .create(
        {
          model: 'gpt-4o-mini',
          messages: [
            { role: 'user', content: 'tell a story' },
            { role: 'assistant', content: partial },
            { role: 'user', content: 'go on' },
          ],
        },
        { headers },
      )
      .withResponse();
    expect(next.response.headers.get('x-chat-thread-id')).toBe(threadId);
    expect(next.data.choices[0]?.message.content).toBe('stub reply to: go on');
  });

  it('a client closing its stream stops its own turn only: the next turn queued in the thread still completes', async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const headers = { 'X-Thread-Id': 'stop-own-turn' };
    gate.held = new Promise((resolve) => {
      gate.open = resolve;
    });
    const before = server.stub.requests.length;
    const controller = new AbortController();
    try {
      const { data: stream, response } = await client.chat.completions
        .create(
          { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a held story' }] },
          { headers, signal: controller.signal },
        )
        .withResponse();
      const threadId = response.headers.get('x-chat-thread-id');
      const reading = (async () => {
        for await (const chunk of stream) void chunk;
      })().catch(() => undefined);
      await waitFor(() => server.stub.requests.length > before);
      // The conversation goes on while the first answer has not begun: the second turn waits behind it.
      const second = client.chat.completions
        .create(
          {
            model: 'gpt-4o-mini',
            messages: [
              { role: 'user', content: 'a held story' },
              { role: 'user', content: 'and then?' },
            ],
          },
          { headers },
        )
        .withResponse();
      await waitFor(async () => {
        const messages = (
          (await (await server.app.api(`/api/threads/${threadId}/messages`, { token: guest.token })).json()) as {
            messages: MessageDto[];
          }
        ).messages;
        return messages.some((message) => message.content === 'and then?');
      });
      controller.abort();
      await reading;
      await waitFor(() =>
        server.stub.requests
          .slice(before)
          .some((request) => JSON.stringify(request.body.messages.at(-1)).includes('and then?')),
      );
      gate.held = null;
      gate.open();
      const answered = await second;
      expect(answered.response.headers.get('x-chat-thread-id')).toBe(threadId);
      expect(answered.data.choices[0]?.message.content).toBe('stub reply to: and then?');
      const messages = (
        (await (await server.app.api(`/api/threads/${threadId}/messages`, { token: guest.token })).json()) as {
          messages: MessageDto[];
        }
      ).messages;
      // The first answer was stopped before its first word; the second completed.
      expect(messages.map((message) => [message.role, message.content, message.status])).toEqual([
        ['user', 'a held story', 'complete'],
        ['assistant', '', 'cancelled'],
        ['user', 'and then?', 'complete'],
        ['assistant', 'stub reply to: and then?', 'complete'],
      ]);
      // The client's history (no answer to the stopped request) goes on in the same thread.
      const next = await client.chat.completions
        .create(
          {
            model: 'gpt-4o-mini',
            messages: [
              { role: 'user', content: 'a held story' },
              { role: 'user', content: 'and then?' },
              { role: 'assistant', content: 'stub reply to: and then?' },
              { role: 'user', content: 'the end' },
            ],
          },
          { headers },
        )
        .withResponse();
      expect(next.response.headers.get('x-chat-thread-id')).toBe(threadId);
      expect(next.data.choices[0]?.message.content).toBe('stub reply to: the end');
    } finally {
      gate.held = null;
      gate.open();
    }
  });

  it.each([
    ['streamed', true],
    ['not streamed', false],
  ])(
    'a client (%s) that goes away while its turn waits behind another: its message takes its place, the model is never called for it',
    async (_label, stream) => {
      const guest = await server.guest();
      const client = openaiClient(server, { apiKey: guest.token });
      const headers = { 'X-Thread-Id': `cancel-queued-${stream}` };
      const db = createDatabase({ url: server.app.databaseUrl, poolSize: 1 });
      gate.held = new Promise((resolve) => {
        gate.open = resolve;
      });
      const before = server.stub.requests.length;
      try {
        const first = client.chat.completions.create(
          { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'held question' }] },
          { headers },
        );
        await waitFor(() => server.stub.requests.length > before);
        const controller = new AbortController();
        const second = client.chat.completions
          .create(
            {
              model: 'gpt-4o-mini',
              stream,
              messages: [
                { role: 'user', content: 'held question' },
                { role: 'user', content: 'queued question' },
              ],
            },
            { headers, signal: controller.signal },
          )
          .catch((error: unknown) => error);
        const queued = () => db.$queryRaw<{ status: string; cancel_requested: boolean }[]>`
          SELECT t.status, t.cancel_requested FROM turns t
          JOIN messages m ON m.id = t.user_message_id JOIN threads h ON h.id = t.thread_id
          WHERE h.owner_id = ${guest.userId} AND m.content = 'queued question'`;
        await waitFor(async () => (await queued())[0]?.status === 'queued');
        controller.abort();
        await second;
        await waitFor(async () => (await queued())[0]?.cancel_requested === true);
        gate.held = null;
        gate.open();
        expect((await first).choices[0]?.message.content).toBe('stub reply to: held question');
        await waitFor(async () => (await queued())[0]?.status === 'cancelled');
        expect(
          server.stub.requests
            .slice(before)
            .some((request) => JSON.stringify(request.body.messages.at(-1)).includes('queued question')),
        ).toBe(false);
        const threadId = (
          await db.$queryRaw<{ id: string }[]>`SELECT id::text FROM threads WHERE owner_id = ${guest.userId}`
        )[0]?.id;
        const messages = (
          (await (await server.app.api(`/api/threads/${threadId}/messages`, { token: guest.token })).json()) as {
            messages: MessageDto[];
          }
        ).messages;
        expect(messages.map((message) => [message.role, message.content, message.status, message.seq])).toEqual([
          ['user', 'held question', 'complete', 1],
          ['assistant', 'stub reply to: held question', 'complete', 2],
          ['user', 'queued question', 'complete', 3],
          ['assistant', '', 'cancelled', 4],
        ]);
      } finally {
        gate.held = null;
        gate.open();
        await db.$disconnect();
      }
    },
  );
});
