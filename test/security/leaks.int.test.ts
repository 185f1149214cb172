import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AdminThreadDetailDto } from '../../src/shared/admin-api';
import type { ThreadDetailDto, ThreadDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { replyWithError, startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { createTestDatabase } from '../support/databases';
import { startServerProcess, type ServerProcess } from '../support/worker-process';
import { waitFor } from '../support/wait-for';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** What a provider's error text may carry: the gateway's internals, a key fragment, the user's own words. */
const PROVIDER_DETAIL = 'gateway eu-west-7 rejected key sk-live-4f2a for prompt "my IBAN is DE89 3704"';

/** Cursors this server never handed out: wrong encodings, wrong ids, wrong dates, extra fields. */
const MALFORMED_CURSORS = [
  '!!!not-base64!!!',
  Buffer.from('2024-01-01T00:00:00.000Z|not-a-uuid').toString('base64url'),
  Buffer.from('yesterday|0b6a9a3e-4f7e-4a51-9a8e-3c1f2d4b5a6c').toString('base64url'),
  Buffer.from('2024-01-01T00:00:00.000Z|0b6a9a3e-4f7e-4a51-9a8e-3c1f2d4b5a6c|extra').toString('base64url'),
  Buffer.from('{"key":"1; DROP TABLE threads","at":"x","id":"y"}').toString('base64url'),
];

/** A word whose transcript's summaries the stub refuses. */
const FOLD_FAILS = 'fold-refused-7d3c';

describe('leaks and malformed input', () => {
  const summaries = summaryResponder();
  const server = useChatServer({
    stub: {
      classifyRequest,
      // The provider refuses the summaries of a transcript that holds FOLD_FAILS, and only those: no flag for
      // cases to share.
      responder: (request) =>
        request.kind === 'summary' && JSON.stringify(request.body.messages).includes(FOLD_FAILS)
          ? replyWithError(400, { message: PROVIDER_DETAIL })
          : summaries(request),
    },
    env: {
      OPENAI_API_KEY: 'sk-test',
      SUMMARY_TRIGGER: 'messages=4',
      SUMMARY_KEEP: 'messages=2',
      MODEL_MAX_RETRIES: '0',
    },
  });

  it('answers a malformed page cursor with 400 VALIDATION on every paged route, never 500', async () => {
    const { token } = await server.guest();
    // A real page of threads first: the cursor the server hands out still works.
    for (const title of ['one', 'two', 'three'])
      await server.app.api('/api/threads', { method: 'POST', token, json: { title } });
    const first = (await (await server.app.api('/api/threads?limit=2', { token })).json()) as {
      threads: ThreadDto[];
      nextCursor: string | null;
    };
    expect(first.nextCursor).not.toBeNull();
    const second = await server.app.api(`/api/threads?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`, {
      token,
    });
    expect(second.status).toBe(200);
    expect(((await second.json()) as { threads: ThreadDto[] }).threads.map((thread) => thread.title)).toEqual(['one']);

    for (const cursor of MALFORMED_CURSORS) {
      for (const [path, bearer] of [
        ['/api/threads', token],
        ['/api/admin/threads', ADMIN_TOKEN],
        ['/api/admin/audit', ADMIN_TOKEN],
      ] as const) {
        const response = await server.app.api(`${path}?cursor=${encodeURIComponent(cursor)}`, { token: bearer });
        expect({ path, cursor, status: response.status }).toEqual({ path, cursor, status: 400 });
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe('VALIDATION');
      }
    }
  });

  it('shows users a generic coded notice of a failed fold, and admins the detail', async () => {
    const { token } = await server.guest();
    const thread = (await (
      await server.app.api('/api/threads', { method: 'POST', token, json: {} })
    ).json()) as ThreadDto;
    for (const content of [`${FOLD_FAILS} first`, 'second', 'third']) {
      expect(
        (await server.app.api(`/api/threads/${thread.id}/messages`, { method: 'POST', token, json: { content } }))
          .status,
      ).toBe(201);
    }
    // Five attempts with exponential backoff (1 + 2 + 4 + 8 s) before the failure is recorded.
    let detail: ThreadDetailDto | null = null;
    await waitFor(
      async () => {
        detail = (await (await server.app.api(`/api/threads/${thread.id}`, { token })).json()) as ThreadDetailDto;
        return detail.context.lastFoldError !== null;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: 'the fold to fail for good' },
    );

    const shown = detail!.context.lastFoldError!;
    expect(shown.code).toBe('UNAVAILABLE');
    expect(shown.message).toMatch(/summary could not be updated/i);
    const raw = JSON.stringify(detail);
    for (const fragment of ['eu-west-7', 'sk-live', 'IBAN', 'DE89']) expect(raw).not.toContain(fragment);
    expect(server.stub.requests.some((request) => request.kind === 'summary' && request.status === 400)).toBe(true);

    const admin = (await (
      await server.app.api(`/api/admin/threads/${thread.id}`, { token: ADMIN_TOKEN })
    ).json()) as AdminThreadDetailDto;
    expect(admin.context.lastFoldError).toContain('eu-west-7');
  }, 120_000);
});

describe('credentials inside OPENAI_BASE_URL', () => {
  let stub: OpenAIStub;
  const running: ServerProcess[] = [];
  beforeAll(async () => {
    stub = await startOpenAIStub();
  });
  afterAll(async () => {
    for (const server of running) await server.kill('SIGKILL');
    await stub?.close();
  });

  it('never reach a log line of the server, even at debug level and when a call through that URL fails', async () => {
    const password = 'Gw-pass-7c1e9b42d';
    const queryKey = 'qk-51f0e2a9c8';
    const baseUrl = stub.url.replace('http://', `http://gateway-user:${password}@`) + `?api-key=${queryKey}`;
    const database = await createTestDatabase('scrub');
    const server = startServerProcess({
      DATABASE_URL: database.url,
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: `s${randomBytes(4).toString('hex')}`,
      OPENAI_BASE_URL: baseUrl,
      LOG_LEVEL: 'debug',
      MODEL_MAX_RETRIES: '0',
      AUTH_SECRET: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: randomBytes(24).toString('hex'),
    });
    running.push(server);
    const port = await server.port;
    const api = (path: string, init: { method?: string; token?: string; json?: unknown } = {}) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          ...(init.token ? { Authorization: `Bearer ${init.token}` } : {}),
          'Content-Type': 'application/json',
        },
        ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
      });
    const { token } = (await (await api('/api/auth/guest', { method: 'POST' })).json()) as { token: string };
    const thread = (await (await api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const sent = await api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token,
      json: { content: 'hello through the gateway' },
    });
    const answer = JSON.stringify(await sent.json());
    await waitFor(() => /turn failed|model call failed/.test(server.output()), {
      timeoutMs: 30_000,
      what: 'the failed call to be logged',
    });

    const output = server.output();
    // The call was made and failed on the URL's credentials; its error (which quotes the URL) was logged.
    expect(output).toMatch(/model endpoint configured/);
    expect(output).toMatch(/OPENAI_BASE_URL carries credentials/);
    for (const leaked of [password, queryKey, `gateway-user:${password}`]) {
      expect(output).not.toContain(leaked);
      expect(answer).not.toContain(leaked);
    }
    await server.kill('SIGTERM');
    await database.drop();
  }, 90_000);
});
