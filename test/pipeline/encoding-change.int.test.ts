import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/core/context';
import type { ContextPackDto, ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

describe('a deployment that changes its chat model to one with another encoding', () => {
  let stub: OpenAIStub;
  beforeAll(async () => {
    stub = await startOpenAIStub({ models: ['gpt-4', 'gpt-4o'] });
  });
  afterAll(async () => {
    await stub?.close();
  });

  it('recounts the stored window with the new encoding instead of mixing counts', async () => {
    const content = 'Ünïcödé façade — 東京 and emojis 🎉 for a distinct count';
    const cl100k = createTokenCounter('cl100k_base');
    const o200k = createTokenCounter('o200k_base');
    const newCount = o200k.countMessage({ role: 'user', content });
    // The text counts differently under the two encodings: a count left as it was would show.
    expect(cl100k.countMessage({ role: 'user', content })).not.toBe(newCount);

    const before = await startTestApp({ env: { OPENAI_BASE_URL: stub.url, CHAT_MODEL: 'gpt-4' } });
    const { token } = await before.guest();
    const thread = (await (await before.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const sent = await before.api(`/api/threads/${thread.id}/messages`, { method: 'POST', token, json: { content } });
    expect(sent.status).toBe(201);
    let beforeRunning = true;
    const db = new pg.Client({ connectionString: before.databaseUrl });
    await db.connect();
    /** The thread's stored entries: role, encoding and tokens, by seq. */
    const stored = async () =>
      (
        await db.query<{ role: string; encoding: string; tokens: number }>(
          'SELECT role, encoding, tokens FROM context_entries WHERE thread_id = $1 ORDER BY seq',
          [thread.id],
        )
      ).rows;
    try {
      // The exchange is in the window, counted with gpt-4's encoding.
      expect((await stored()).map((entry) => [entry.role, entry.encoding])).toEqual([
        ['user', 'cl100k_base'],
        ['assistant', 'cl100k_base'],
      ]);
      await before.stop();
      beforeRunning = false;

      const after = await startTestApp({
        database: { url: before.databaseUrl },
        authSecret: before.authSecret,
        env: { OPENAI_BASE_URL: stub.url, CHAT_MODEL: 'gpt-4o' },
      });
      try {
        const context = (await (
          await after.api(`/api/threads/${thread.id}/context`, { token })
        ).json()) as ContextPackDto;
        const user = context.messages.find((message) => message.role === 'user');
        expect(user?.content).toBe(content);
        expect(user?.tokens).toBe(newCount);
        await waitFor(async () => (await stored()).every((entry) => entry.encoding === 'o200k_base'), {
          what: 'recounted tokens to be stored',
        });
        const recounted = await stored();
        expect(recounted).toHaveLength(2);
        expect(recounted[0]?.tokens).toBe(newCount);
      } finally {
        await after.stop();
      }
    } finally {
      await db.end();
      if (beforeRunning) await before.stop();
    }
  });
});
