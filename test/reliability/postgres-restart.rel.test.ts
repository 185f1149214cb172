import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/app/embedded/embedded-postgres';
import { findFreePort } from '../../src/app/embedded/process-tools';
import type { SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { replyWithText, lastUserText, startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { migrateTestDatabase } from '../support/databases';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';

describe('Postgres restarted during traffic', () => {
  let dir: string;
  let port: number;
  let postgres: EmbeddedPostgres;
  let databaseUrl: string;
  let stub: OpenAIStub;
  let app: TestApp;

  beforeAll(async () => {
    dir = await makeServiceTempDir('chat-pg-restart-');
    port = await findFreePort();
    postgres = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port });
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query('CREATE DATABASE chat');
    await admin.end();
    databaseUrl = postgres.url.replace(/\/postgres$/, '/chat');
    await migrateTestDatabase(databaseUrl);
    stub = await startOpenAIStub({
      responder: (request) => replyWithText(`answer to ${lastUserText(request.body)}`, { firstByteDelayMs: 50 }),
    });
    app = await startTestApp({ database: { url: databaseUrl }, env: { OPENAI_BASE_URL: stub.url } });
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
    await postgres?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('fails requests with a clear retryable error, writes nothing by halves, and recovers without a restart', async () => {
    const { token } = await app.guest();
    const threads = await Promise.all(
      [1, 2, 3].map(
        async () => (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto,
      ),
    );
    const accepted: { threadId: string; content: string }[] = [];
    const statuses: number[] = [];
    let stop = false;
    const clients = threads.map(async (thread, client) => {
      for (let turn = 0; !stop; turn += 1) {
        const content = `client ${client} turn ${turn}`;
        try {
          const response = await app.api(`/api/threads/${thread.id}/messages`, {
            method: 'POST',
            token,
            json: { content },
          });
          statuses.push(response.status);
          const body = (await response.json()) as SendMessageResponseDto & { error?: { code: string } };
          if (response.status === 201) accepted.push({ threadId: thread.id, content });
          else {
            expect(body.error?.code).toBe('UNAVAILABLE');
            expect(response.headers.get('retry-after')).not.toBeNull();
          }
        } catch {
          statuses.push(0);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });

    await new Promise((resolve) => setTimeout(resolve, 1500));
    await postgres.stop();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    postgres = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    stop = true;
    await Promise.all(clients);

    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);
    // It recovered by itself: a new turn works, and the sweeper settles what the outage interrupted.
    const after = await app.api(`/api/threads/${threads[0]!.id}/messages`, {
      method: 'POST',
      token,
      json: { content: 'after the restart' },
    });
    expect(after.status).toBe(201);

    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      await waitFor(
        async () =>
          Number(
            (await db.query("SELECT count(*) FROM messages WHERE status IN ('streaming', 'pending')")).rows[0].count,
          ) === 0,
        { timeoutMs: 30_000, what: 'interrupted turns to settle' },
      );
      for (const { threadId, content } of accepted) {
        const rows = await db.query(
          "SELECT status FROM messages WHERE thread_id = $1 AND role = 'user' AND content = $2",
          [threadId, content],
        );
        expect(rows.rowCount).toBe(1);
      }
      for (const thread of threads) {
        const seqs = (
          await db.query<{ seq: number }>('SELECT seq FROM messages WHERE thread_id = $1 ORDER BY seq', [thread.id])
        ).rows.map((row) => row.seq);
        expect(seqs).toEqual(seqs.map((_, index) => index + 1));
      }
    } finally {
      await db.end();
    }
  });
});
