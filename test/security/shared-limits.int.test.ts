import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/app/embedded/embedded-redis';
import { findFreePort } from '../../src/app/embedded/process-tools';
import type { ThreadDto } from '../../src/shared/api';
import { openTab, type Tab } from '../support/socket-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { startServerProcess, type ServerProcess } from '../support/worker-process';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

describe('per-user and per-address limits shared by every process through Redis', () => {
  let app: TestApp;
  let child: ServerProcess;
  let childUrl: string;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'shared-limits-'));
    const limits = { RATE_LIMIT_PER_MINUTE: '3', GUEST_RATE_LIMIT_PER_MINUTE: '4' };
    app = await startTestApp({ mode: 'serve', env: limits });
    // A second server process (`npm run serve`) on the same Postgres, Redis and prefix.
    child = startServerProcess({
      ...limits,
      DATA_DIR: dataDir,
      DATABASE_URL: app.databaseUrl,
      REDIS_URL: app.redisUrl,
      REDIS_PREFIX: app.prefix,
      AUTH_SECRET: app.authSecret,
      ADMIN_TOKEN,
    });
    childUrl = `http://127.0.0.1:${await child.port}`;
  }, 120_000);
  afterAll(async () => {
    await child?.kill('SIGTERM');
    await app?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const guestAt = (baseUrl: string) => fetch(`${baseUrl}/api/auth/guest`, { method: 'POST' });

  it('counts guest sessions of one address across both processes', async () => {
    const statuses: number[] = [];
    for (const baseUrl of [app.baseUrl, childUrl, app.baseUrl, childUrl, app.baseUrl, childUrl])
      statuses.push((await guestAt(baseUrl)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 429, 429]);
    const refused = await guestAt(childUrl);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
  });

  it("counts a user's sends across both processes, REST and sockets alike (RATE_LIMIT_PER_MINUTE)", async () => {
    const user = await app.application.deps.tokens.sign({ userId: `limited-${Date.now()}`, kind: 'external' });
    const thread = (await (
      await app.api('/api/threads', { method: 'POST', token: user, json: {} })
    ).json()) as ThreadDto;
    // Socket sends are acknowledged when accepted (the turn runs after): one tab on each process.
    const here = await openTab(app, user);
    const there = await openTab({ baseUrl: childUrl }, user);
    try {
      const send = async (tab: Tab, content: string) =>
        (await tab.request('message-send', { threadId: thread.id, content, clientMessageId: `c-${content}` })).response;
      expect(await send(here, 'one')).toMatchObject({ ok: true });
      expect(await send(there, 'two')).toMatchObject({ ok: true });
      const third = await send(here, 'three');
      expect(third, JSON.stringify(third)).toMatchObject({ ok: true });
      expect(await send(there, 'four')).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
      const rest = await fetch(`${childUrl}/api/threads/${thread.id}/messages`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${user}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ content: 'five' }),
      });
      expect(rest.status).toBe(429);
      expect(await rest.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    } finally {
      here.close();
      there.close();
    }
  });
});

describe('with Redis down the limits hold per process', () => {
  let redis: EmbeddedRedis;
  let redisDir: string;
  let redisPort: number;
  let app: TestApp;

  beforeAll(async () => {
    redisDir = await mkdtemp(path.join(tmpdir(), 'limits-redis-'));
    redisPort = await findFreePort();
    redis = await startEmbeddedRedis({ dataDir: redisDir, port: redisPort, persist: false });
    app = await startTestApp({
      env: { REDIS_URL: redis.url, GUEST_RATE_LIMIT_PER_MINUTE: '2', RATE_LIMIT_PER_MINUTE: '2' },
    });
  });
  afterAll(async () => {
    await app?.stop();
    await redis?.stop();
    await rm(redisDir, { recursive: true, force: true });
  });

  it('keeps answering, and still refuses past the limit from memory', async () => {
    const statuses = async (count: number) => {
      const seen: number[] = [];
      for (let index = 0; index < count; index += 1)
        seen.push((await app.api('/api/auth/guest', { method: 'POST' })).status);
      return seen;
    };
    await waitFor(() => app.application.deps.probes.redis().catch(() => false), {
      timeoutMs: 15_000,
      what: 'the Redis connection',
    });
    expect(await statuses(3)).toEqual([201, 201, 429]);
    await redis.stop();
    // Degraded, not down: this process counts alone from here.
    expect(await statuses(3)).toEqual([201, 201, 429]);
    const user = await app.application.deps.tokens.sign({ userId: `outage-${Date.now()}`, kind: 'external' });
    const thread = (await (
      await app.api('/api/threads', { method: 'POST', token: user, json: {} })
    ).json()) as ThreadDto;
    const send = (content: string) =>
      app.api(`/api/threads/${thread.id}/messages`, { method: 'POST', token: user, json: { content } });
    expect((await send('first while Redis is down')).status).toBe(201);
    expect((await send('second while Redis is down')).status).toBe(201);
    expect((await send('third while Redis is down')).status).toBe(429);
  });
});
