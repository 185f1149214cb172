import { describe, expect, it } from 'vitest';
import type { MessageDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText } from '../support/openai-stub';

const DELAY_MS = 400;

describe('turn serialization', () => {
  // Every answer takes DELAY_MS before its first byte, so overlapping turns would show.
  const server = useChatServer({
    stub: {
      responder: (request) => replyWithText(`answer to ${lastUserText(request.body)}`, { firstByteDelayMs: DELAY_MS }),
    },
  });

  const newThread = async () =>
    (await (
      await server.app.api('/api/threads', { method: 'POST', token: server.token, json: {} })
    ).json()) as ThreadDto;
  const send = (threadId: string, content: string) =>
    server.app.api(`/api/threads/${threadId}/messages`, { method: 'POST', token: server.token, json: { content } });

  it('runs two concurrent sends to one thread as two complete turns, one after the other', async () => {
    const thread = await newThread();
    const [first, second] = await Promise.all([send(thread.id, 'first question'), send(thread.id, 'second question')]);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    const bodies = [(await first.json()) as SendMessageResponseDto, (await second.json()) as SendMessageResponseDto];
    for (const body of bodies) {
      expect(body.turn.status).toBe('complete');
      expect(body.messages.at(-1)?.content).toBe(`answer to ${body.userMessage.content}`);
    }
    const page = (await (
      await server.app.api(`/api/threads/${thread.id}/messages`, { token: server.token })
    ).json()) as { messages: MessageDto[] };
    const roles = page.messages.map((message) => `${message.seq}:${message.role}`);
    expect(roles).toEqual(['1:user', '2:assistant', '3:user', '4:assistant']);
    // Each answer directly follows its own question, and the second turn's request saw the first turn whole.
    expect(page.messages[1]?.content).toBe(`answer to ${page.messages[0]?.content}`);
    expect(page.messages[3]?.content).toBe(`answer to ${page.messages[2]?.content}`);
    const secondRequest = server.stub.requests.find(
      (request) => lastUserText(request.body) === page.messages[2]?.content,
    );
    expect(secondRequest?.body.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
  });

  it('runs sends to 20 threads in parallel without serializing them', async () => {
    const slow = 2000;
    server.stub.setResponder((request) =>
      replyWithText(`answer to ${lastUserText(request.body)}`, { firstByteDelayMs: slow }),
    );
    const threads = await Promise.all(Array.from({ length: 20 }, () => newThread()));
    const before = server.stub.requests.length;
    const responses = await Promise.all(threads.map((thread, index) => send(thread.id, `parallel ${index}`)));
    expect(responses.every((response) => response.status === 201)).toBe(true);
    // All 20 model requests were in flight together: each arrived before the first one could have been answered.
    // Serialized, they would arrive at least `slow` ms apart.
    const arrivals = server.stub.requests.slice(before).map((request) => request.receivedAt);
    expect(arrivals).toHaveLength(20);
    expect(Math.max(...arrivals) - Math.min(...arrivals)).toBeLessThan(slow);
    server.stub.setResponder((request) =>
      replyWithText(`answer to ${lastUserText(request.body)}`, { firstByteDelayMs: DELAY_MS }),
    );
  });

  it('refuses a send beyond the queue bound with BUSY and stores nothing for it', async () => {
    const thread = await newThread();
    const sends = Array.from({ length: 8 }, (_, index) => send(thread.id, `queued ${index}`));
    const statuses = await Promise.all(sends.map(async (response) => (await response).status));
    // One running turn plus MAX_QUEUED_TURNS (5) waiting are accepted; the rest get 409 BUSY.
    expect(statuses.filter((status) => status === 201)).toHaveLength(6);
    expect(statuses.filter((status) => status === 409)).toHaveLength(2);
    const page = (await (
      await server.app.api(`/api/threads/${thread.id}/messages`, { token: server.token })
    ).json()) as { messages: MessageDto[] };
    expect(page.messages.filter((message) => message.role === 'user')).toHaveLength(6);
  });
});
