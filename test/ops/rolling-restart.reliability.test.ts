import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ThreadDto } from '../../src/shared/api';
import {
  lastUserText,
  replyWithText,
  startOpenAIStub,
  type OpenAIStub,
  type StubResponder,
} from '../support/openai-stub';
import { openTab, type Tab } from '../support/socket-client';
import { waitFor } from '../support/wait-for';
import { prepareProcessStack, type ProcessStack } from '../support/process-stack';
import { startServerProcess, type ServerProcess } from '../support/worker-process';

const words = (text: string, count: number) => Array.from({ length: count }, (_, index) => `${text}-${index} `);
/** An answer of `count` words, one chunk each, `delayMs` apart. */
const slowly =
  (count: number, delayMs: number): StubResponder =>
  (request) => {
    const said = lastUserText(request.body);
    return replyWithText('', { chunks: [`answer to ${said}: `, ...words('w', count)], chunkDelayMs: delayMs });
  };

describe('SIGTERM under traffic (a rolling restart)', () => {
  let stub: OpenAIStub;
  let databaseUrl: string;
  let stack: ProcessStack | undefined;
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];
  const tabs: Tab[] = [];

  beforeAll(async () => {
    stub = await startOpenAIStub({ responder: slowly(40, 100) });
    stack = await prepareProcessStack({
      name: 'restart',
      modelUrl: stub.url,
      env: {
        SHUTDOWN_GRACE_MS: '1500',
        SWEEP_INTERVAL_MS: '500',
        RATE_LIMIT_PER_MINUTE: '10000',
        MAX_QUEUED_TURNS: '4',
      },
    });
    ({ databaseUrl, env } = stack);
  });
  afterAll(async () => {
    for (const tab of tabs) tab.close();
    for (const server of servers) await server.kill();
    await stub?.close();
    await stack?.removeDataDir();
  });

  it('stores every accepted message once, leaves no answer streaming, and the next server finishes the queue', async () => {
    const first = startServerProcess(env);
    servers.push(first);
    const base = `http://127.0.0.1:${await first.port}`;
    const api = (pathName: string, token: string | null, json?: unknown) =>
      fetch(`${base}${pathName}`, {
        method: json === undefined ? 'GET' : 'POST',
        headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });

    // Three clients, each on its own thread, sending over a socket as fast as the server accepts.
    const clients = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const { token } = (await (await api('/api/auth/guest', null, {})).json()) as { token: string };
        const thread = (await (await api('/api/threads', token, {})).json()) as ThreadDto;
        const tab = await openTab({ baseUrl: base }, token);
        tabs.push(tab);
        return { token, thread, tab, accepted: [] as string[], refused: 0 };
      }),
    );
    let sending = true;
    const traffic = clients.map(async (client, index) => {
      for (let n = 0; sending && client.tab.socket.connected; n += 1) {
        const content = `client ${index} message ${n}`;
        const { response } = await client.tab
          .request('message-send', { threadId: client.thread.id, content, clientMessageId: `c${index}-m${n}` })
          .catch(() => ({ response: { ok: false } }));
        if (response.ok) client.accepted.push(content);
        else client.refused += 1;
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    });

    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      // SIGTERM while answers stream and others wait in the threads' queues (both waited for: a turn starts within
      // milliseconds of its send, so two answers can stream before a second send per thread was accepted).
      const acceptedSoFar = () => clients.reduce((sum, client) => sum + client.accepted.length, 0);
      await waitFor(
        async () =>
          (await db.query("SELECT 1 FROM messages WHERE status = 'streaming'")).rowCount! >= 2 &&
          (await db.query("SELECT 1 FROM turns WHERE status = 'queued'")).rowCount! >= 1 &&
          acceptedSoFar() >= 6,
        { timeoutMs: 20_000, what: 'answers streaming and turns queued behind them' },
      );
      first.child.kill('SIGTERM');
      expect(await first.exited, first.output().slice(-3000)).toBe(0);
      sending = false;
      await Promise.all(traffic);
      const accepted = clients.flatMap((client) => client.accepted);
      expect(accepted.length).toBeGreaterThanOrEqual(6);

      const count = async (sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0]!.n);
      // Nothing left half-done by the stopped server: the running answers ended complete or cancelled.
      expect(await count("SELECT count(*) AS n FROM messages WHERE status = 'streaming'")).toBe(0);
      expect(await count("SELECT count(*) AS n FROM turns WHERE status = 'running'")).toBe(0);
      expect(await count("SELECT count(*) AS n FROM turns WHERE status = 'cancelled'")).toBeGreaterThanOrEqual(1);
      expect(await count("SELECT count(*) AS n FROM turns WHERE status = 'queued'")).toBeGreaterThanOrEqual(1);

      // The next server (answering fast now) resumes the queued turns from Postgres.
      stub.setResponder(slowly(3, 0));
      const second = startServerProcess(env);
      servers.push(second);
      await second.port;
      await waitFor(
        async () => (await count("SELECT count(*) AS n FROM turns WHERE status IN ('queued', 'running')")) === 0,
        { timeoutMs: 30_000, what: 'the queued turns to finish on the second server' },
      );

      for (const content of accepted) {
        const rows = await db.query<{ status: string; seq: number | null; turn_status: string }>(
          'SELECT m.status, m.seq, t.status AS turn_status FROM messages m JOIN turns t ON t.id = m.turn_id WHERE m.content = $1',
          [content],
        );
        expect(rows.rows, content).toHaveLength(1);
        expect(rows.rows[0]!.seq, content).not.toBeNull();
        expect(['complete', 'cancelled']).toContain(rows.rows[0]!.turn_status);
      }
      expect(await count("SELECT count(*) AS n FROM messages WHERE status IN ('streaming', 'pending')")).toBe(0);
      // Each thread's transcript is gapless and alternates question, answer.
      for (const client of clients) {
        const rows = await db.query<{ seq: number; role: string }>(
          'SELECT seq, role FROM messages WHERE thread_id = $1 ORDER BY seq',
          [client.thread.id],
        );
        expect(rows.rows.map((row) => row.seq)).toEqual(rows.rows.map((_, index) => index + 1));
        expect(rows.rows.map((row) => row.role)).toEqual(
          rows.rows.map((_, index) => (index % 2 === 0 ? 'user' : 'assistant')),
        );
        expect(rows.rows.filter((row) => row.role === 'user')).toHaveLength(client.accepted.length);
      }
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      await db.end();
    }
  }, 120_000);
});
