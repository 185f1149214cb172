import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const CLIENTS = 50;
const TURNS = 40;
const SHARED = 5;

describe('load: 50 concurrent clients x 40 turns, 5 of them on one shared thread', () => {
  let stub: OpenAIStub;
  let app: TestApp;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder() });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        SUMMARY_TRIGGER: 'messages=20',
        SUMMARY_KEEP: 'messages=6',
        SUMMARY_MAX_TOKENS: '200',
        RATE_LIMIT_PER_MINUTE: '100000',
        LOG_LEVEL: 'error',
      },
    });
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('loses, duplicates and reorders nothing; seqs stay gapless per thread', async () => {
    const { token } = await app.guest();
    const newThread = async () =>
      (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const shared = await newThread();
    const own = await Promise.all(Array.from({ length: CLIENTS - SHARED }, () => newThread()));
    const threadOf = (client: number) => (client < SHARED ? shared : own[client - SHARED]!);
    const sent = new Map<string, string[]>();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        const thread = threadOf(client);
        for (let turn = 0; turn < TURNS; turn += 1) {
          const content = `c${client}-t${turn}`;
          const response = await app.api(`/api/threads/${thread.id}/messages`, {
            method: 'POST',
            token,
            json: { content, clientMessageId: content },
          });
          const body = (await response.json()) as SendMessageResponseDto;
          // The body says why, should a send ever fail (and the server logs the cause at error level).
          expect({ status: response.status, body: response.status === 201 ? null : body }).toEqual({
            status: 201,
            body: null,
          });
          expect(body.turn.status).toBe('complete');
          expect(body.messages.at(-1)?.content).toBe(`stub reply to: ${content}`);
          sent.set(thread.id, [...(sent.get(thread.id) ?? []), content]);
        }
      }),
    );

    const db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
    try {
      for (const [threadId, contents] of sent) {
        const rows = (
          await db.query<{ seq: number; role: string; content: string }>(
            'SELECT seq, role, content FROM messages WHERE thread_id = $1 ORDER BY seq',
            [threadId],
          )
        ).rows;
        expect(rows.map((row) => row.seq)).toEqual(rows.map((_, index) => index + 1));
        const users = rows.filter((row) => row.role === 'user').map((row) => row.content);
        expect(users.sort()).toEqual([...contents].sort());
        // Each answer directly follows its own question.
        rows.forEach((row, index) => {
          if (row.role === 'assistant') expect(row.content).toBe(`stub reply to: ${rows[index - 1]?.content}`);
        });
        // A client's own messages keep their order.
        const turnOf = (content: string) => Number(content.split('-t')[1]);
        for (let client = 0; client < CLIENTS; client += 1) {
          const mine = rows
            .filter((row) => row.role === 'user' && row.content.startsWith(`c${client}-`))
            .map((row) => row.content);
          expect(mine).toEqual([...mine].sort((a, b) => turnOf(a) - turnOf(b)));
        }
      }
      // Folds caught up, each applied once: revisions cover contiguous ranges.
      await waitFor(
        async () =>
          Number(
            (
              await db.query(
                'SELECT count(*) FROM threads t WHERE (SELECT count(*) FROM context_entries e WHERE e.thread_id = t.id AND e.seq > t.summary_covered_through_seq) >= 20',
              )
            ).rows[0].count,
          ) === 0,
        { timeoutMs: 60_000, what: 'folds to catch up' },
      );
      const revisions = (
        await db.query<{ thread_id: string; from_seq: number; through_seq: number }>(
          'SELECT thread_id, from_seq, through_seq FROM summary_revisions ORDER BY thread_id, revision',
        )
      ).rows;
      const byThread = new Map<string, typeof revisions>();
      for (const revision of revisions)
        byThread.set(revision.thread_id, [...(byThread.get(revision.thread_id) ?? []), revision]);
      for (const list of byThread.values()) {
        list.forEach((revision, index) =>
          expect(revision.from_seq).toBe(index === 0 ? 1 : list[index - 1]!.through_seq + 1),
        );
      }
    } finally {
      await db.end();
    }
  }, 300_000);
});
