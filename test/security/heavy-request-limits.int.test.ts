import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ThreadDto } from '../../src/shared/api';
import { startTestApp, type TestApp } from '../support/test-app';

/** Exports and erasures (EXPORTS_PER_MINUTE), and the context preview's cross-thread search (SEARCH_PER_MINUTE). */
describe('exports, erasure and the context preview are rate-limited per user', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { EXPORTS_PER_MINUTE: '2', SEARCH_PER_MINUTE: '2' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const newThread = async (token: string) =>
    (await (await app.api('/api/threads', { method: 'POST', token, json: { title: 't' } })).json()) as ThreadDto;

  it('answers 429 with Retry-After past EXPORTS_PER_MINUTE for thread and account exports, and for an erasure', async () => {
    const { token } = await app.guest();
    const thread = await newThread(token);
    expect((await app.api(`/api/threads/${thread.id}/export`, { token })).status).toBe(200);
    expect((await app.api('/api/me/export', { token })).status).toBe(200);
    for (const path of [`/api/threads/${thread.id}/export`, '/api/me/export']) {
      const refused = await app.api(path, { token });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect((await app.api('/api/me', { method: 'DELETE', token })).status).toBe(429);
    // Another user has a budget of their own.
    const other = await app.guest();
    expect((await app.api('/api/me', { method: 'DELETE', token: other.token })).status).toBe(204);
  });

  it("spends SEARCH_PER_MINUTE on the context preview when it searches the user's other threads, not otherwise", async () => {
    const { token } = await app.guest();
    const local = await newThread(token);
    const scoped = await app.api(`/api/threads/${local.id}/settings`, {
      method: 'PATCH',
      token,
      json: { recallScope: 'thread' },
    });
    expect(scoped.status).toBe(200);
    for (let attempt = 0; attempt < 4; attempt += 1)
      expect((await app.api(`/api/threads/${local.id}/context`, { token })).status).toBe(200);
    const wide = await newThread(token);
    const set = await app.api(`/api/threads/${wide.id}/settings`, {
      method: 'PATCH',
      token,
      json: { recallScope: 'user' },
    });
    expect(set.status).toBe(200);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1)
      statuses.push((await app.api(`/api/threads/${wide.id}/context`, { token })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
