import { describe, expect, it } from 'vitest';
import type { MessageDto, ThreadDto } from '../../src/shared/api';
import { maxHttpBufferSize } from '../../src/realtime/max-http-buffer-size';
import { useChatServer } from '../support/chat-server';
import { replyWithText } from '../support/openai-stub';
import { connectError, eventsOf } from '../support/socket-client';
import { waitFor } from '../support/wait-for';

const MAX_MESSAGE_CHARS = 2000;
/** Sends per user per minute. The main user's tests stay well below it; the rate limit test uses its own user. */
const RATE_LIMIT = 5;

describe('socket.io refusals', () => {
  const server = useChatServer({
    stub: { responder: () => replyWithText('a short answer', { chunkDelayMs: 20 }) },
    env: { MAX_MESSAGE_CHARS: String(MAX_MESSAGE_CHARS), RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) },
  });

  const tab = (as?: string) => server.openTab(as);
  const newThread = async (as = server.token) =>
    (await (await server.app.api('/api/threads', { method: 'POST', token: as, json: {} })).json()) as ThreadDto;
  const transcript = async (threadId: string) =>
    (
      (await (await server.app.api(`/api/threads/${threadId}/messages`, { token: server.token })).json()) as {
        messages: MessageDto[];
      }
    ).messages;

  it('refuses a connection without a valid token with UNAUTHORIZED', async () => {
    for (const auth of [{ token: 'not-a-jwt' }, {}, { token: 42 }]) {
      const error = await connectError(server.app, auth);
      expect(error.data?.code).toBe('UNAUTHORIZED');
      expect(error.data?.message).toBeTruthy();
    }
    // Signed with another secret.
    const forged = `${server.token.split('.').slice(0, 2).join('.')}.AAAA`;
    expect((await connectError(server.app, { token: forged })).data?.code).toBe('UNAUTHORIZED');
  });

  it('answers malformed payloads with a VALIDATION ack and stores nothing', async () => {
    const thread = await newThread();
    const view = await tab();
    const chatRequests = server.stub.requests.length;
    const malformed: Array<[string, unknown]> = [
      ['message-send', { threadId: 'not-a-uuid', content: 'hi', clientMessageId: 'm1' }],
      ['message-send', { threadId: thread.id, content: 42, clientMessageId: 'm2' }],
      ['message-send', { threadId: thread.id, content: 'hi' }],
      ['message-send', { threadId: thread.id, content: 'hi', clientMessageId: 'm3', role: 'system' }],
      ['message-send', { threadId: thread.id, content: '   ', clientMessageId: 'm4' }],
      ['message-send', { threadId: thread.id, content: 'hi', clientMessageId: 'spaces are not allowed' }],
      ['message-send', 'just a string'],
      ['message-send', null],
      ['thread-join', { threadId: thread.id, afterSeq: -1 }],
      ['thread-join', { threadId: thread.id, afterSeq: '3' }],
      ['thread-leave', {}],
      ['turn-cancel', { threadId: 7 }],
      ['tool-cancel', {}],
    ];
    for (const [event, payload] of malformed) {
      const { response } = await view.request(event, payload);
      expect(response, `${event} ${JSON.stringify(payload)}`).toMatchObject({
        ok: false,
        error: { code: 'VALIDATION' },
      });
    }
    // Without an ack callback the server neither answers nor falls over.
    (view.socket.emit as (event: string, ...args: unknown[]) => void)('message-send', { nonsense: true });
    (view.socket.emit as (event: string, ...args: unknown[]) => void)('thread-join');
    const { response } = await view.request('thread-join', { threadId: thread.id });
    expect(response).toMatchObject({ ok: true, messages: [] });
    expect(view.socket.connected).toBe(true);
    expect(await transcript(thread.id)).toEqual([]);
    expect(server.stub.requests.length).toBe(chatRequests);
  });

  it("refuses another user's thread with NOT_FOUND and sends none of its events", async () => {
    const thread = await newThread();
    const owner = await tab();
    await owner.request('thread-join', { threadId: thread.id });
    const other = await server.guest();
    const intruder = await tab(other.token);
    for (const [event, payload] of [
      ['thread-join', { threadId: thread.id }],
      ['message-send', { threadId: thread.id, content: 'let me in', clientMessageId: 'x1' }],
      ['turn-cancel', { threadId: thread.id }],
    ] as const) {
      const { response } = await intruder.request(event, payload);
      expect(response, event).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'No such thread.' } });
    }
    const { response: sent } = await owner.request<{ turnId: string }>('message-send', {
      threadId: thread.id,
      content: 'private',
      clientMessageId: 'p1',
    });
    expect(sent.ok).toBe(true);
    await waitFor(() => eventsOf(owner, 'turn-end').length === 1, { timeoutMs: 20_000, what: "the owner's turn" });
    expect(intruder.events).toEqual([]);
    expect((await transcript(thread.id)).map((message) => message.content)).toEqual(['private', 'a short answer']);
  });

  it('answers TOO_LARGE within the frame limit and disconnects a bigger frame, storing nothing', async () => {
    const thread = await newThread();
    const view = await tab();
    const { response } = await view.request('message-send', {
      threadId: thread.id,
      content: 'x'.repeat(MAX_MESSAGE_CHARS + 1),
      clientMessageId: 'big-1',
    });
    expect(response).toMatchObject({ ok: false, error: { code: 'TOO_LARGE' } });
    expect(view.socket.connected).toBe(true);

    const disconnected = new Promise<string>((resolve) => view.socket.once('disconnect', (reason) => resolve(reason)));
    let answered = false;
    (view.socket.emit as (event: string, ...args: unknown[]) => void)(
      'message-send',
      { threadId: thread.id, content: 'y'.repeat(maxHttpBufferSize(MAX_MESSAGE_CHARS) + 1), clientMessageId: 'big-2' },
      () => {
        answered = true;
      },
    );
    expect(await disconnected).toMatch(/transport (close|error)/);
    expect(answered).toBe(false);
    expect(await transcript(thread.id)).toEqual([]);
    // The server is fine: a new tab works.
    const again = await tab();
    expect((await again.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
  });

  it('shares the REST send limit: RATE_LIMITED once the user used it up', async () => {
    const user = await server.guest();
    const thread = await newThread(user.token);
    const view = await tab(user.token);
    for (let index = 0; index < RATE_LIMIT - 1; index += 1) {
      const { response } = await view.request('message-send', {
        threadId: thread.id,
        content: `message ${index}`,
        clientMessageId: `rl-${index}`,
      });
      expect(response.ok).toBe(true);
    }
    const rest = await server.app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token: user.token,
      json: { content: 'over REST' },
    });
    expect(rest.status).toBe(201);
    const { response } = await view.request('message-send', {
      threadId: thread.id,
      content: 'one too many',
      clientMessageId: 'rl-last',
    });
    expect(response).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
    expect((response as { error: { retryAfterSeconds?: number } }).error.retryAfterSeconds).toBeGreaterThan(0);
  });

  it('answers tool-cancel for an unknown run with NOT_FOUND', async () => {
    const view = await tab();
    const { response } = await view.request('tool-cancel', { runId: 'no-such-run' });
    expect(response).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });
});
