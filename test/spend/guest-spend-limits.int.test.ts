// Spend limits of guests (issue 35): the guest default refusing a send in each front door's own shape (REST, socket
// ack, /v1 as OpenAI's insufficient_quota), nothing stored; and the per-address total all guests of one address share.
import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import type { SpendUsageDto, ThreadDto, MessageDto } from '../../src/shared/api';
import { useChatServer, type ChatServer } from '../support/chat-server';
import { openaiClient, chatRequests } from '../facade/facade-kit';

async function json<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function newThread(chat: ChatServer, token: string): Promise<ThreadDto> {
  return json<ThreadDto>(await chat.app.api('/api/threads', { method: 'POST', json: { title: 'guest' }, token }), 201);
}

describe('the guest default spend limit', () => {
  // Smaller than any send's worst case: every send of a guest is refused.
  const server = useChatServer({ env: { SPEND_LIMIT_GUEST: '100tokens/day', CONTEXT_MAX_INPUT_TOKENS: '3000' } });

  it('refuses a send over REST, over a socket (ack) and over /v1 (insufficient_quota), storing nothing', async () => {
    const guest = await server.guest();
    const thread = await newThread(server, guest.token);
    const usage = await json<SpendUsageDto>(await server.app.api('/api/me/usage', { token: guest.token }), 200);
    expect(usage).toMatchObject({ enforced: true, unit: 'tokens', spent: 0, reserved: 0, limit: 100, remaining: 100 });
    expect(usage.perSend).toBeGreaterThan(100);

    const rest = await server.app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      json: { content: 'over REST' },
      token: guest.token,
    });
    expect(rest.status).toBe(429);
    const restBody = (await rest.json()) as { error: Record<string, unknown> };
    expect(restBody.error).toMatchObject({
      code: 'SPEND_LIMIT_REACHED',
      limit: '100tokens/day',
      resetsAt: usage.resetsAt,
    });
    expect(restBody.error.message).toBe(
      `Your spend limit of 100 tokens per day is reached; it resets at ${usage.resetsAt}.`,
    );

    const tab = await server.openTab(guest.token);
    const { response } = await tab.request<{ message: MessageDto }>('message-send', {
      threadId: thread.id,
      content: 'over a socket',
      clientMessageId: 'socket-1',
    });
    expect(response.ok).toBe(false);
    if (!response.ok) {
      expect(response.error.code).toBe('SPEND_LIMIT_REACHED');
      expect(response.error.message).toContain(usage.resetsAt);
    }

    const client = openaiClient(server, { apiKey: guest.token });
    const refused = await client.chat.completions
      .create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'over v1' }] },
        { headers: { 'X-Thread-Id': 'v1' } },
      )
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(APIError);
    expect(refused).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'insufficient_quota' });
    expect((refused as APIError).message).toContain('100 tokens per day');
    expect((refused as APIError).headers?.get('x-should-retry')).toBe('false');
    expect((refused as APIError).headers?.get('retry-after')).toBeNull();

    // A background request (a title, tags) is held like a send: no way around the limit.
    const auxiliary = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '### Task: title this chat' }] })
      .catch((error: unknown) => error);
    expect(auxiliary).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'insufficient_quota' });

    // None of them reached the model or the transcript.
    expect(chatRequests(server)).toHaveLength(0);
    const messages = await json<{ messages: MessageDto[] }>(
      await server.app.api(`/api/threads/${thread.id}/messages`, { token: guest.token }),
      200,
    );
    expect(messages.messages).toHaveLength(0);
  });
});

describe('the per-address total of guests', () => {
  const server = useChatServer({
    env: {
      SPEND_LIMIT_GUEST: '100000000tokens/day',
      // Room for one send (its worst case: a 2,700-token prompt and a 300-token answer), whoever of the address's
      // guests sends it, and not for a second one after what the first spent.
      SPEND_LIMIT_GUESTS_PER_ADDRESS: '3200tokens/day',
      CONTEXT_MAX_INPUT_TOKENS: '3000',
      RESERVED_OUTPUT_TOKENS: '300',
    },
  });

  it('counts every guest of the address against one total: a new guest session does not start afresh', async () => {
    const first = await server.guest();
    const sent = await server.app.api(`/api/threads/${(await newThread(server, first.token)).id}/messages`, {
      method: 'POST',
      json: { content: 'first guest' },
      token: first.token,
    });
    expect(sent.status).toBe(201);
    expect(server.app.application.spend!.holdAmount().tokens).toBe(3000);
    // A second guest of the same address (every test request comes from 127.0.0.1): its own limit is far away, the
    // address's total is not.
    const second = await server.guest();
    const refused = await server.app.api(`/api/threads/${(await newThread(server, second.token)).id}/messages`, {
      method: 'POST',
      json: { content: 'second guest' },
      token: second.token,
    });
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { code: string; scope: string; message: string } };
    expect(body.error).toMatchObject({ code: 'SPEND_LIMIT_REACHED', scope: 'address' });
    expect(body.error.message).toMatch(/^The guests of your network's spend limit of 3,200 tokens per day/);
  });
});
