import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ContextPackDto, MessageDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import {
  echoResponder,
  lastUserText,
  replySequence,
  replyWithCut,
  replyWithError,
  replyWithText,
  startOpenAIStub,
  type OpenAIStub,
} from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';

describe('REST API', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let token: string;
  let db: pg.Client;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest });
    app = await startTestApp({ env: { OPENAI_BASE_URL: stub.url, MAX_MESSAGE_CHARS: '2000', MODEL_MAX_RETRIES: '2' } });
    ({ token } = await app.guest());
    db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await app?.stop();
    await stub?.close();
  });
  beforeEach(() => {
    stub.reset();
  });

  const newThread = async (title?: string) =>
    (await (
      await app.api('/api/threads', { method: 'POST', token, json: title ? { title } : {} })
    ).json()) as ThreadDto;
  const send = (threadId: string, json: unknown, extra: { token?: string } = {}) =>
    app.api(`/api/threads/${threadId}/messages`, { method: 'POST', token: extra.token ?? token, json });
  const messageCount = async (threadId: string) =>
    Number((await db.query('SELECT count(*) FROM messages WHERE thread_id = $1', [threadId])).rows[0].count);

  describe('auth', () => {
    it('refuses requests without a token, with a forged token, with another algorithm and with an expired token', async () => {
      const thread = await newThread();
      expect((await app.api('/api/threads')).status).toBe(401);
      const forged = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('someone')
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode('not-the-secret-not-the-secret-not-the-secret'));
      expect((await app.api('/api/threads', { token: forged })).status).toBe(401);
      const expired = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('someone')
        .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
        .sign(new TextEncoder().encode(app.authSecret));
      const response = await app.api(`/api/threads/${thread.id}`, { token: expired });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'The token has expired.' } });
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'x' })).toString('base64url')}.`;
      expect((await app.api('/api/threads', { token: unsigned })).status).toBe(401);
    });

    it('accepts tokens a host application mints with the shared secret, and refreshes a guest token', async () => {
      const hostToken = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('host-user-42')
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(app.authSecret));
      expect(
        (await app.api('/api/threads', { method: 'POST', token: hostToken, json: { title: 'from the host app' } }))
          .status,
      ).toBe(201);
      const refreshed = (await (await app.api('/api/auth/refresh', { method: 'POST', token })).json()) as {
        token: string;
        userId: string;
      };
      const listed = (await (await app.api('/api/threads', { token: refreshed.token })).json()) as {
        threads: ThreadDto[];
      };
      expect(listed.threads.length).toBeGreaterThan(0);
    });

    it("answers another user's thread with 404, never its content", async () => {
      const thread = await newThread('private');
      const other = await app.guest();
      for (const [method, path] of [
        ['GET', ''],
        ['GET', '/messages'],
        ['GET', '/context'],
        ['PATCH', ''],
        ['DELETE', ''],
      ] as const) {
        const response = await app.api(`/api/threads/${thread.id}${path}`, {
          method,
          token: other.token,
          ...(method === 'PATCH' ? { json: { title: 'mine' } } : {}),
        });
        expect(response.status).toBe(404);
        expect(JSON.stringify(await response.json())).not.toContain('private');
      }
      expect((await send(thread.id, { content: 'hi' }, { token: other.token })).status).toBe(404);
      expect(await messageCount(thread.id)).toBe(0);
    });
  });

  describe('threads', () => {
    it('creates, lists most recent first with paging, renames and deletes threads', async () => {
      const user = await app.guest();
      const ids: string[] = [];
      for (const title of ['one', 'two', 'three']) {
        const created = await app.api('/api/threads', { method: 'POST', token: user.token, json: { title } });
        expect(created.status).toBe(201);
        ids.push(((await created.json()) as ThreadDto).id);
      }
      const first = (await (await app.api('/api/threads?limit=2', { token: user.token })).json()) as {
        threads: ThreadDto[];
        nextCursor: string;
      };
      expect(first.threads.map((thread) => thread.title)).toEqual(['three', 'two']);
      const second = (await (
        await app.api(`/api/threads?limit=2&cursor=${first.nextCursor}`, { token: user.token })
      ).json()) as { threads: ThreadDto[]; nextCursor: string | null };
      expect(second.threads.map((thread) => thread.title)).toEqual(['one']);
      expect(second.nextCursor).toBeNull();
      const renamed = await app.api(`/api/threads/${ids[0]}`, {
        method: 'PATCH',
        token: user.token,
        json: { title: 'renamed' },
      });
      expect(((await renamed.json()) as ThreadDto).title).toBe('renamed');
      expect((await app.api(`/api/threads/${ids[1]}`, { method: 'DELETE', token: user.token })).status).toBe(204);
      expect((await app.api(`/api/threads/${ids[1]}`, { token: user.token })).status).toBe(404);
    });

    it("deletes all of a thread's data with it", async () => {
      const thread = await newThread();
      expect((await send(thread.id, { content: 'to be deleted' })).status).toBe(201);
      expect((await app.api(`/api/threads/${thread.id}`, { method: 'DELETE', token })).status).toBe(204);
      for (const table of ['messages', 'context_entries', 'turns', 'model_calls', 'summary_revisions']) {
        expect((await db.query(`SELECT count(*) FROM ${table} WHERE thread_id = $1`, [thread.id])).rows[0].count).toBe(
          '0',
        );
      }
    });
  });

  describe('bad input is refused with a clear error and stores nothing', () => {
    const cases: [string, unknown, number, string][] = [
      ['empty', { content: '' }, 400, 'VALIDATION'],
      ['whitespace only', { content: '   \n\t ' }, 400, 'VALIDATION'],
      ['wrong type', { content: 42 }, 400, 'VALIDATION'],
      ['unknown field', { content: 'hi', extra: true }, 400, 'VALIDATION'],
      ['too long', { content: 'x'.repeat(2001) }, 413, 'TOO_LARGE'],
      ['bad clientMessageId', { content: 'hi', clientMessageId: 'has spaces in it' }, 400, 'VALIDATION'],
    ];
    for (const [name, body, status, code] of cases) {
      it(name, async () => {
        const thread = await newThread();
        const response = await send(thread.id, body);
        expect(response.status).toBe(status);
        expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code });
        expect(await messageCount(thread.id)).toBe(0);
      });
    }

    it('a 10 MB body, invalid JSON and an unknown thread id', async () => {
      const thread = await newThread();
      const huge = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ content: 'x'.repeat(10 * 1024 * 1024) }),
      });
      expect(huge.status).toBe(413);
      const invalid = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        headers: { 'Content-Type': 'application/json' },
        body: '{"content": "unterminated',
      });
      expect(invalid.status).toBe(400);
      expect((await send('00000000-0000-4000-8000-000000000000', { content: 'hi' })).status).toBe(404);
      expect((await send('not-a-uuid', { content: 'hi' })).status).toBe(400);
      expect(await messageCount(thread.id)).toBe(0);
    });

    it('stores and echoes injection strings as plain text', async () => {
      const thread = await newThread();
      const content = `'); DROP TABLE messages; -- <script>alert(1)</script>`;
      const body = (await (await send(thread.id, { content })).json()) as SendMessageResponseDto;
      expect(body.userMessage.content).toBe(content);
      const page = (await (await app.api(`/api/threads/${thread.id}/messages`, { token })).json()) as {
        messages: MessageDto[];
      };
      expect(page.messages[0]?.content).toBe(content);
    });
  });

  it('answers a repeated clientMessageId with the original message and turn, not a second turn', async () => {
    const thread = await newThread();
    const first = (await (
      await send(thread.id, { content: 'only once', clientMessageId: 'same-key' })
    ).json()) as SendMessageResponseDto;
    const again = await send(thread.id, { content: 'only once', clientMessageId: 'same-key' });
    expect(again.status).toBe(200);
    const repeated = (await again.json()) as SendMessageResponseDto;
    expect(repeated.userMessage.id).toBe(first.userMessage.id);
    expect(repeated.messages.map((message) => message.id)).toEqual(first.messages.map((message) => message.id));
    expect(stub.requests.filter((request) => request.kind === 'chat')).toHaveLength(1);
    expect(await messageCount(thread.id)).toBe(2);
  });

  it('streams the turn as server-sent events when asked', async () => {
    stub.setResponder(() => replyWithText('streamed answer', { chunks: ['stream', 'ed ', 'answer'] }));
    const thread = await newThread();
    const response = await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token,
      json: { content: 'stream please' },
      headers: { Accept: 'text/event-stream' },
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((block) => /event: (\S+)/.exec(block)?.[1]);
    expect(events[0]).toBe('message-accepted');
    expect(events).toContain('message-start');
    expect(events.filter((event) => event === 'message-delta').length).toBeGreaterThanOrEqual(1);
    expect(events.at(-1)).toBe('turn-end');
    const deltas = text
      .split('\n\n')
      .filter((block) => block.startsWith('event: message-delta'))
      .map((block) => JSON.parse(block.split('data: ')[1] ?? '{}') as { offset: number; delta: string });
    expect(deltas.map((delta) => delta.delta).join('')).toBe('streamed answer');
    expect(deltas[0]?.offset).toBe(0);
  });

  it('retries provider errors with backoff, then answers', async () => {
    stub.setResponder(
      replySequence([replyWithError(500), replyWithError(429, { retryAfterSeconds: 0 })], echoResponder),
    );
    const thread = await newThread();
    const body = (await (await send(thread.id, { content: 'flaky provider' })).json()) as SendMessageResponseDto;
    expect(body.turn.status).toBe('complete');
    expect(body.messages.at(-1)?.content).toBe('stub reply to: flaky provider');
    expect(stub.requests).toHaveLength(3);
  });

  it('tells the user when the provider keeps failing, keeps their message, and retries on request', async () => {
    stub.setResponder(() => replyWithError(503));
    const thread = await newThread();
    const failed = (await (await send(thread.id, { content: 'are you there?' })).json()) as SendMessageResponseDto;
    expect(failed.turn.status).toBe('error');
    expect(failed.turn.error?.code).toBe('PROVIDER_ERROR');
    expect(failed.userMessage.status).toBe('complete');
    expect(failed.messages.at(-1)).toMatchObject({ role: 'assistant', status: 'error' });
    expect(stub.requests).toHaveLength(3);

    stub.setResponder(echoResponder);
    const retried = await app.api(`/api/threads/${thread.id}/messages/${failed.userMessage.id}/retry`, {
      method: 'POST',
      token,
    });
    expect(retried.status).toBe(201);
    const body = (await retried.json()) as SendMessageResponseDto;
    expect(body.messages.at(-1)).toMatchObject({
      role: 'assistant',
      status: 'complete',
      content: 'stub reply to: are you there?',
    });
    // The failed answer never reaches the model: the retry's request ends with the user's question.
    expect(stub.requests.at(-1)?.body.messages.map((message) => message.role)).toEqual(['system', 'user']);
  });

  it('keeps a partial answer when the stream is cut, marked as an error', async () => {
    stub.setResponder(() => replyWithCut('The first half of'));
    const thread = await newThread();
    const body = (await (await send(thread.id, { content: 'cut me off' })).json()) as SendMessageResponseDto;
    expect(body.turn.status).toBe('error');
    expect(body.messages.at(-1)).toMatchObject({ status: 'error', content: 'The first half of' });
  });

  it('folds and retries once when the provider reports context_length_exceeded', async () => {
    // The provider's real limit is far below what we were told: our pack is fine by our budget, not by theirs.
    // 1,200 tokens: a folded pack (system prefix, the offered tools' schemas, a summary within its 150-token cap, two
    // kept messages and the input) fits it; two padded exchanges past the window do not. (1,000 was too tight once the
    // summary grew by appended segments: a summary of ~90 tokens at turn 5 left the folded pack a few tokens over.)
    const small = await startOpenAIStub({ classifyRequest, maxContextTokens: 1200, responder: summaryResponder() });
    const tight = await startTestApp({
      env: {
        OPENAI_BASE_URL: small.url,
        SUMMARY_TRIGGER: 'tokens=100000',
        SUMMARY_KEEP: 'messages=2',
        SUMMARY_MAX_TOKENS: '150',
        SUMMARY_INPUT_MAX_TOKENS: '650',
      },
    });
    try {
      const user = await tight.guest();
      const thread = (await (
        await tight.api('/api/threads', { method: 'POST', token: user.token, json: {} })
      ).json()) as ThreadDto;
      let last: SendMessageResponseDto | undefined;
      for (let turn = 1; turn <= 6; turn += 1) {
        const response = await tight.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token: user.token,
          json: { content: `turn ${turn} CODE-${turn} ${'padding words '.repeat(60)}` },
        });
        last = (await response.json()) as SendMessageResponseDto;
        expect(last.turn.status, JSON.stringify(last.messages.at(-1))).toBe('complete');
      }
      expect(small.requests.some((request) => request.rejection?.code === 'context_length_exceeded')).toBe(true);
      const revisions = await new pg.Client({ connectionString: tight.databaseUrl });
      await revisions.connect();
      const rows = (await revisions.query('SELECT author FROM summary_revisions WHERE thread_id = $1', [thread.id]))
        .rows as { author: string }[];
      const calls = (
        await revisions.query('SELECT count(*) FROM model_calls WHERE thread_id = $1 AND overflow_retry', [thread.id])
      ).rows[0] as { count: string };
      await revisions.end();
      expect(rows.map((row) => row.author)).toContain('overflow-fallback');
      expect(Number(calls.count)).toBeGreaterThan(0);
    } finally {
      await tight.stop();
      await small.close();
    }
  }, 180_000);

  it('shows exactly what the next model call gets', async () => {
    const thread = await newThread();
    await send(thread.id, { content: 'first question' });
    const context = (await (await app.api(`/api/threads/${thread.id}/context`, { token })).json()) as ContextPackDto;
    expect(context.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant']);
    expect(context.tokens).toBeLessThanOrEqual(context.budget);
    await send(thread.id, { content: 'second question' });
    const request = stub.requests.at(-1);
    // The owner's preview hides the system prompt's text (its hash stands for it); the rest is what the model got.
    const [prompt, ...rest] = context.messages;
    expect(prompt).toMatchObject({ role: 'system', content: '', systemPrompt: { hidden: true } });
    const sent = request!.body.messages.slice(0, 3).map((message) => String(message.content));
    expect(
      createHash('sha256')
        .update(sent[0] ?? '')
        .digest('hex'),
    ).toBe(prompt?.systemPrompt?.hash);
    expect(sent.slice(1)).toEqual(rest.map((message) => message.content));
    expect(lastUserText(request!.body)).toBe('second question');
    // Every chat call is recorded with our estimate next to the provider's count: they agree within 2%.
    const calls = (
      await db.query<{ estimated_prompt_tokens: number; reported_prompt_tokens: number }>(
        "SELECT estimated_prompt_tokens, reported_prompt_tokens FROM model_calls WHERE thread_id = $1 AND purpose = 'chat'",
        [thread.id],
      )
    ).rows;
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.reported_prompt_tokens).toBeGreaterThan(0);
      expect(Math.abs(call.estimated_prompt_tokens - call.reported_prompt_tokens)).toBeLessThanOrEqual(
        Math.ceil(0.02 * call.reported_prompt_tokens),
      );
    }
  });
});
