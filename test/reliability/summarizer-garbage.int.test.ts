import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import {
  echoResponder,
  replyWithText,
  startOpenAIStub,
  type OpenAIStub,
  type StubResponder,
} from '../support/openai-stub';
import { classifyRequest } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

describe('a summarizer that returns empty or garbage text', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  const garbage = ['', '   ', 'Error: upstream model failed', "I'm sorry, I can't help with that.", '[object Object]'];
  let summaryCalls = 0;

  beforeAll(async () => {
    const responder: StubResponder = (request) => {
      if (request.kind !== 'summary') return echoResponder(request);
      const text = garbage[summaryCalls % garbage.length] ?? '';
      summaryCalls += 1;
      return replyWithText(text);
    };
    stub = await startOpenAIStub({ classifyRequest, responder });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        SUMMARY_TRIGGER: 'messages=4',
        SUMMARY_KEEP: 'messages=2',
        SUMMARY_MAX_TOKENS: '200',
      },
    });
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('never commits it: the job fails and retries, the previous summary stays, the failure is recorded, turns keep working', async () => {
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    for (let turn = 1; turn <= 3; turn += 1) {
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `message ${turn}` },
      });
      expect(((await response.json()) as SendMessageResponseDto).turn.status).toBe('complete');
    }
    const db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
    try {
      // BullMQ retries with backoff (1 s, 2 s, ...); the sweeper may enqueue again later: wait for a recorded failure.
      await waitFor(
        async () => {
          const row = (await db.query('SELECT last_fold_error FROM threads WHERE id = $1', [thread.id])).rows[0] as {
            last_fold_error: string | null;
          };
          return row.last_fold_error !== null;
        },
        { timeoutMs: 60_000, what: 'the fold failure to be recorded' },
      );
      expect(summaryCalls).toBeGreaterThanOrEqual(5);
      expect(
        (await db.query('SELECT count(*) FROM summary_revisions WHERE thread_id = $1', [thread.id])).rows[0].count,
      ).toBe('0');
      const state = (await db.query('SELECT summary_text, summary_revision FROM threads WHERE id = $1', [thread.id]))
        .rows[0];
      expect(state).toEqual({ summary_text: '', summary_revision: 0 });
    } finally {
      await db.end();
    }
    const after = await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token,
      json: { content: 'still answering?' },
    });
    expect(((await after.json()) as SendMessageResponseDto).messages.at(-1)?.content).toBe(
      'stub reply to: still answering?',
    );
  }, 90_000);
});
