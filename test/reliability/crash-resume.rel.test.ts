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

// Issue 33 item 8: the app killed mid-answer (SIGKILL; Postgres and Redis keep running) and started again on the same
// data answers every accepted message exactly once: the answers cut by the kill run again (RESUME_INTERRUPTED_TURNS's
// default), nothing is lost or duplicated, and no answer ends as INTERNAL.

const words = (count: number) => Array.from({ length: count }, (_, index) => `w-${index} `);
/** An answer that names its question, of `count` words, `delayMs` apart. */
const answering =
  (count: number, delayMs: number): StubResponder =>
  (request) =>
    replyWithText('', {
      chunks: [`answer to ${lastUserText(request.body)}: `, ...words(count)],
      chunkDelayMs: delayMs,
    });

describe('SIGKILL mid-answer, then a restart on the same data', () => {
  let stub: OpenAIStub;
  let databaseUrl: string;
  let stack: ProcessStack | undefined;
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];
  const tabs: Tab[] = [];

  beforeAll(async () => {
    stub = await startOpenAIStub({ responder: answering(60, 100) });
    stack = await prepareProcessStack({
      name: 'crash',
      modelUrl: stub.url,
      env: { SWEEP_INTERVAL_MS: '500', RATE_LIMIT_PER_MINUTE: '10000', MAX_QUEUED_TURNS: '4' },
    });
    ({ databaseUrl, env } = stack);
  });
  afterAll(async () => {
    for (const tab of tabs) tab.close();
    for (const server of servers) await server.kill();
    await stub?.close();
    await stack?.removeDataDir();
  });

  it('answers every accepted message exactly once within 90 s of the restart; the cut answers run again', async () => {
    const first = startServerProcess(env);
    servers.push(first);
    const base = `http://127.0.0.1:${await first.port}`;
    const post = (url: string, pathName: string, token: string | null, json: unknown) =>
      fetch(`${url}${pathName}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(json),
      });

    // Three clients, each on its own thread, sending over a socket as fast as the server accepts.
    const clients = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const { token } = (await (await post(base, '/api/auth/guest', null, {})).json()) as { token: string };
        const thread = (await (await post(base, '/api/threads', token, {})).json()) as ThreadDto;
        const tab = await openTab({ baseUrl: base }, token);
        tabs.push(tab);
        return { token, thread, tab, accepted: [] as string[], unsure: [] as { content: string; id: string }[] };
      }),
    );
    let sending = true;
    const traffic = clients.map(async (client, index) => {
      for (let n = 0; sending && client.tab.socket.connected; n += 1) {
        const content = `client ${index} message ${n}`;
        const clientMessageId = `c${index}-m${n}`;
        const { response } = await client.tab
          .request('message-send', { threadId: client.thread.id, content, clientMessageId })
          .catch(() => ({ response: { ok: false } }));
        // A send without an answer (the kill came first) may have been stored: the client resends it later.
        if (response.ok) client.accepted.push(content);
        else client.unsure.push({ content, id: clientMessageId });
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    });

    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const count = async (sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0]!.n);
    try {
      // The kill comes while answers stream and later sends wait behind them.
      const acceptedSoFar = () => clients.reduce((sum, client) => sum + client.accepted.length, 0);
      await waitFor(
        async () =>
          (await count("SELECT count(*) AS n FROM messages WHERE status = 'streaming' AND content <> ''")) >= 2 &&
          (await count("SELECT count(*) AS n FROM turns WHERE status = 'queued'")) >= 1 &&
          acceptedSoFar() >= 6,
        { timeoutMs: 30_000, what: 'answers streaming and turns queued behind them' },
      );
      await first.kill('SIGKILL');
      sending = false;
      await Promise.all(traffic);
      const cutMidAnswer = await count("SELECT count(*) AS n FROM turns WHERE status = 'running'");
      expect(cutMidAnswer).toBeGreaterThanOrEqual(2);

      // The next server answers quickly; its clients resend what they are unsure of (the same clientMessageId).
      stub.setResponder(answering(3, 0));
      const second = startServerProcess(env);
      servers.push(second);
      const restartedBase = `http://127.0.0.1:${await second.port}`;
      const restartedAt = Date.now();
      // (REST answers once the turn ended: the resends wait together.)
      await Promise.all(
        clients.flatMap((client) =>
          client.unsure.map(async ({ content, id }) => {
            const resent = await post(restartedBase, `/api/threads/${client.thread.id}/messages`, client.token, {
              content,
              clientMessageId: id,
            });
            if (resent.status === 200 || resent.status === 201) client.accepted.push(content);
          }),
        ),
      );
      await waitFor(
        async () =>
          (await count("SELECT count(*) AS n FROM turns WHERE status IN ('queued', 'running')")) === 0 &&
          (await count("SELECT count(*) AS n FROM messages WHERE status IN ('streaming', 'pending')")) === 0,
        { timeoutMs: 90_000 - (Date.now() - restartedAt), what: 'every accepted message answered after the restart' },
      );

      // Every accepted message is stored once, with exactly one answer that counts: complete, and answering it.
      for (const client of clients) {
        const rows = await db.query<{
          seq: number;
          role: string;
          content: string;
          status: string;
          superseded: boolean;
          code: string | null;
        }>(
          "SELECT seq, role, content, status, superseded, error->>'code' AS code FROM messages WHERE thread_id = $1 ORDER BY seq",
          [client.thread.id],
        );
        const transcript = rows.rows;
        expect(transcript.map((row) => row.seq)).toEqual(transcript.map((_, index) => index + 1));
        const users = transcript.filter((row) => row.role === 'user');
        expect(users.map((row) => row.content).sort()).toEqual([...new Set(client.accepted)].sort());
        for (const [index, user] of users.entries()) {
          const nextSeq = users[index + 1]?.seq ?? Infinity;
          const answers = transcript.filter(
            (row) => row.role === 'assistant' && row.seq > user.seq && row.seq < nextSeq && !row.superseded,
          );
          expect(answers, user.content).toHaveLength(1);
          expect(answers[0], user.content).toMatchObject({ status: 'complete' });
          expect(answers[0]!.content.startsWith(`answer to ${user.content}:`), answers[0]!.content).toBe(true);
        }
        // The cut answers are kept, superseded, with the code that says what happened.
        for (const row of transcript.filter((row) => row.superseded))
          expect(row, row.content).toMatchObject({ status: 'error', code: 'INTERRUPTED' });
      }
      expect(await count("SELECT count(*) AS n FROM messages WHERE error->>'code' = 'INTERNAL'")).toBe(0);
      expect(
        await count("SELECT count(*) AS n FROM turns WHERE error->>'code' = 'INTERRUPTED' AND status = 'error'"),
      ).toBe(cutMidAnswer);
      expect(await count('SELECT count(*) AS n FROM turns WHERE resumed_from_turn_id IS NOT NULL')).toBe(cutMidAnswer);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      await db.end();
    }
  }, 180_000);
});
