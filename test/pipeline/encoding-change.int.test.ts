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
    const before = await startTestApp({ env: { OPENAI_BASE_URL: stub.url, CHAT_MODEL: 'gpt-4' } });
    const { token } = await before.guest();
    const thread = (await (await before.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    await before.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token,
      json: { content: 'Ünïcödé façade — 東京 and emojis 🎉 for a distinct count' },
    });
    await before.stop();

    const after = await startTestApp({
      database: { url: before.databaseUrl },
      authSecret: before.authSecret,
      env: { OPENAI_BASE_URL: stub.url, CHAT_MODEL: 'gpt-4o' },
    });
    try {
      const context = (await (
        await after.api(`/api/threads/${thread.id}/context`, { token })
      ).json()) as ContextPackDto;
      const o200k = createTokenCounter('o200k_base');
      const user = context.messages.find((message) => message.role === 'user');
      expect(user?.tokens).toBe(o200k.countMessage({ role: 'user', content: user?.content ?? '' }));
      const db = new pg.Client({ connectionString: before.databaseUrl });
      await db.connect();
      try {
        await waitFor(
          async () =>
            (
              await db.query("SELECT count(*) FROM context_entries WHERE thread_id = $1 AND encoding <> 'o200k_base'", [
                thread.id,
              ])
            ).rows[0].count === '0',
          { what: 'recounted tokens to be stored' },
        );
      } finally {
        await db.end();
      }
    } finally {
      await after.stop();
    }
  });
});
