import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/shared/errors';
import type { ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { openTab } from '../support/socket-client';
import { startTestApp, type TestApp } from '../support/test-app';

/** Any JSON value, including deep nesting and odd strings. */
const anyJson = fc.jsonValue({ maxDepth: 6 });

describe('REST payload fuzzing', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let token: string;
  let thread: ThreadDto;

  beforeAll(async () => {
    stub = await startOpenAIStub();
    app = await startTestApp({ env: { OPENAI_BASE_URL: stub.url } });
    ({ token } = await app.guest());
    thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('answers any JSON body with a 2xx or a coded 4xx, never a 5xx, and stores a message only when it answered 201', async () => {
    const db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
    let stored = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            anyJson,
            fc.record({ content: anyJson, clientMessageId: fc.option(anyJson) }),
            fc.record({ content: fc.string({ maxLength: 50 }) }),
          ),
          async (body) => {
            const response = await app.api(`/api/threads/${thread.id}/messages`, { method: 'POST', token, json: body });
            const payload = (await response.json()) as { error?: { code: string; message: string } };
            expect(response.status).toBeLessThan(500);
            if (response.status === 201) {
              stored += 1;
            } else {
              expect(payload.error?.code && ERROR_STATUS[payload.error.code as keyof typeof ERROR_STATUS]).toBe(
                response.status,
              );
              expect(payload.error?.message.length).toBeGreaterThan(0);
            }
          },
        ),
        { numRuns: 60 },
      );
      const count = Number(
        (await db.query("SELECT count(*) FROM messages WHERE thread_id = $1 AND role = 'user'", [thread.id])).rows[0]
          .count,
      );
      expect(count).toBe(stored);
    } finally {
      await db.end();
    }
  }, 120_000);

  it('answers malformed thread bodies and queries with VALIDATION', async () => {
    await fc.assert(
      fc.asyncProperty(anyJson, fc.string({ maxLength: 30 }), async (body, query) => {
        // A success, or a refusal coded VALIDATION with a message (not any 400).
        const expectSuccessOrValidation = async (response: Response, success: number) => {
          const answer = (await response.json()) as { error?: { code?: string; message?: string } };
          if (response.status === success) return;
          expect(response.status, JSON.stringify(answer)).toBe(400);
          expect(answer.error?.code).toBe('VALIDATION');
          expect(answer.error?.message?.length).toBeGreaterThan(0);
        };
        await expectSuccessOrValidation(await app.api('/api/threads', { method: 'POST', token, json: body }), 201);
        await expectSuccessOrValidation(
          await app.api(`/api/threads?limit=${encodeURIComponent(query)}`, { token }),
          200,
        );
        await expectSuccessOrValidation(
          await app.api(`/api/threads/${thread.id}/messages?before=${encodeURIComponent(query)}`, { token }),
          200,
        );
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it('answers any socket payload with an ok or a coded error ack, never a crash, and stores a message only on ok', async () => {
    const tab = await openTab(app, token);
    const db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
    const before = Number(
      (await db.query("SELECT count(*) FROM messages WHERE thread_id = $1 AND role = 'user'", [thread.id])).rows[0]
        .count,
    );
    let stored = 0;
    try {
      const payloads = fc.oneof(
        anyJson,
        fc.record({ threadId: fc.oneof(fc.constant(thread.id), anyJson), content: anyJson, clientMessageId: anyJson }),
        fc.record({
          threadId: fc.constant(thread.id),
          content: fc.string({ maxLength: 40 }),
          clientMessageId: fc.stringMatching(/^[a-z0-9]{1,20}$/),
        }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('message-send', 'thread-join', 'turn-cancel', 'tool-cancel', 'thread-leave'),
          payloads,
          async (event, payload) => {
            const { response } = await tab.request<Record<string, unknown>>(event, payload);
            if (response.ok) {
              if (event === 'message-send' && response.duplicate === false) stored += 1;
            } else {
              expect(Object.hasOwn(ERROR_STATUS, response.error.code)).toBe(true);
              expect(response.error.code).not.toBe('INTERNAL');
              expect(response.error.message.length).toBeGreaterThan(0);
            }
          },
        ),
        { numRuns: 80 },
      );
      expect(tab.socket.connected).toBe(true);
      const after = Number(
        (await db.query("SELECT count(*) FROM messages WHERE thread_id = $1 AND role = 'user'", [thread.id])).rows[0]
          .count,
      );
      expect(after - before).toBe(stored);
    } finally {
      tab.close();
      await db.end();
    }
  }, 120_000);
});
