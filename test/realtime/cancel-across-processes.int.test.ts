import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ThreadDto } from '../../src/shared/api';
import { replyWithText, startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** Two `serve` processes of one deployment: a Stop reaches the turn whichever process the request lands on. */
describe('cancel across processes', () => {
  let stub: OpenAIStub;
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    // The answer's first byte comes late: the turn stays running until it is stopped.
    stub = await startOpenAIStub({
      responder: () => replyWithText('a very late answer', { firstByteDelayMs: 30_000 }),
    });
    first = await startTestApp({ mode: 'serve', env: { OPENAI_BASE_URL: stub.url } });
    second = await startTestApp({
      mode: 'serve',
      database: { url: first.databaseUrl },
      authSecret: first.authSecret,
      env: { OPENAI_BASE_URL: stub.url, REDIS_PREFIX: first.prefix },
    });
  }, 120_000);
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await stub?.close();
  });

  it('stops a turn running in the other process: cancelled true, the turn ends cancelled', async () => {
    const { token } = await first.guest();
    const thread = (await (await first.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const sending = first.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token,
      json: { content: 'Take your time.' },
    });
    const turnStatus = async () =>
      (await first.application.db.turn.findFirst({ where: { threadId: thread.id }, orderBy: { createdAt: 'desc' } }))
        ?.status;
    await waitFor(async () => (await turnStatus()) === 'running', { what: 'the turn to run in the first process' });

    const started = Date.now();
    const cancel = await second.api(`/api/threads/${thread.id}/cancel`, { method: 'POST', token });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toEqual({ cancelled: true });
    await waitFor(async () => (await turnStatus()) === 'cancelled', {
      timeoutMs: 10_000,
      what: 'the turn to be cancelled',
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await sending).status).toBeLessThan(500);

    // Nothing running anywhere: false, from either process.
    expect(await (await second.api(`/api/threads/${thread.id}/cancel`, { method: 'POST', token })).json()).toEqual({
      cancelled: false,
    });
  });
});
