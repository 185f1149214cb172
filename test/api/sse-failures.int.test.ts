import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/db/migrate';
import type { ThreadDto } from '../../src/shared/api';
import { createTestDatabase } from '../support/databases';
import { replyWithText, startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { startPostgresCutProxy, type PostgresCutProxy } from '../support/postgres-cut-proxy';
import { startTestApp, type TestApp } from '../support/test-app';

const migrationsDir = path.resolve(import.meta.dirname, '../../prisma/migrations');
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
/** The runner taking the thread's lease (and its turn): Postgres goes away right after the send was accepted. */
const takesLease = (sql: string) => /chat_next_turn\(/.test(sql);

function sseEvents(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      return {
        event: eventLine!.slice('event: '.length),
        data: JSON.parse(dataLine!.slice('data: '.length)) as Record<string, unknown>,
      };
    });
}

describe("a turn whose wait fails reports the failure's own code (SSE like REST)", () => {
  let stub: OpenAIStub;
  let proxy: PostgresCutProxy;
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    stub = await startOpenAIStub({ responder: () => replyWithText('fine') });
    const database = await createTestDatabase('sse');
    await applyMigrations({ databaseUrl: database.url, migrationsDir, log: silent });
    proxy = await startPostgresCutProxy(database.url);
    // A turn that really timed out would end at 3 s (+15 s for the waiter): a database failure must not look like one.
    app = await startTestApp({
      database: { url: proxy.url },
      env: { OPENAI_BASE_URL: stub.url, TURN_TIMEOUT_MS: '3000' },
    });
    ({ token } = await app.guest());
  });
  afterAll(async () => {
    proxy?.restore();
    await app?.stop();
    await proxy?.close();
    await stub?.close();
  });

  const newThread = async () =>
    (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;

  it('ends the event stream with UNAVAILABLE when Postgres goes away during the turn, not PROVIDER_TIMEOUT', async () => {
    const thread = await newThread();
    try {
      proxy.cutAt(takesLease);
      const started = Date.now();
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: 'hello' },
        headers: { Accept: 'text/event-stream' },
      });
      expect(response.status).toBe(200);
      const events = sseEvents(await response.text());
      expect(proxy.cut).toBe(true);
      expect(events[0]?.event).toBe('message-accepted');
      const failure = events.at(-1)!;
      expect(failure.event).toBe('turn-error');
      expect(failure.data).toMatchObject({
        threadId: thread.id,
        turnId: events[0]?.data.turnId,
        error: { code: 'UNAVAILABLE' },
      });
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      // The next case needs the database whatever happened here.
      proxy.restore();
    }
  }, 60_000);

  it('answers the same failure over REST as 503 UNAVAILABLE', async () => {
    const thread = await newThread();
    try {
      proxy.cutAt(takesLease);
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: 'hello' },
      });
      expect(proxy.cut).toBe(true);
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
    } finally {
      // The next case needs the database whatever happened here.
      proxy.restore();
    }
  }, 60_000);
});
