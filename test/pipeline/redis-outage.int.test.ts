import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/app/embedded/embedded-redis';
import { findFreePort } from '../../src/app/embedded/process-tools';
import { ENQUEUE_TIMEOUT_MS } from '../../src/jobs/producer-queue';
import type { SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTcpCutProxy, type TcpCutProxy } from '../support/tcp-cut-proxy';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

describe('with Redis stopped', () => {
  let stub: OpenAIStub;
  let redis: EmbeddedRedis;
  let redisDir: string;
  let proxy: TcpCutProxy;
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    // This test cuts its own Redis, not the one the other tests share: the app reaches it through a proxy the test
    // cuts and restores, while Redis keeps running (and keeps its port).
    redisDir = await mkdtemp(path.join(tmpdir(), 'chat-redis-outage-'));
    redis = await startEmbeddedRedis({ dataDir: redisDir, port: await findFreePort(), persist: false });
    proxy = await startTcpCutProxy({ host: '127.0.0.1', port: Number(new URL(redis.url).port) });
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder() });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        SUMMARY_TRIGGER: 'messages=8',
        SUMMARY_KEEP: 'messages=2',
        SUMMARY_MAX_TOKENS: '200',
      },
    });
    ({ token } = await app.guest());
  });
  afterAll(async () => {
    await app?.stop();
    await proxy?.close();
    await redis?.stop();
    await stub?.close();
    await rm(redisDir, { recursive: true, force: true });
  });
  // Each case starts with Redis reachable, whatever the one before did.
  beforeEach(async () => {
    proxy.restore();
    await waitFor(async () => ((await (await app.api('/readyz')).json()) as { redis: string }).redis === 'up', {
      timeoutMs: 20_000,
      what: 'Redis to be reachable again',
    });
  });
  afterEach(() => proxy.restore());

  it('keeps turns working, reports readiness as degraded, and folds what was missed once Redis is back', async () => {
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    // One turn with Redis up first, so the timings below are not the stub's first-call warm-up.
    expect(
      (
        await app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token,
          json: { content: 'warm-up turn CODE-0' },
        })
      ).status,
    ).toBe(201);
    proxy.cut();

    for (let turn = 1; turn <= 4; turn += 1) {
      const started = Date.now();
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `offline turn ${turn} CODE-${turn}` },
      });
      expect(response.status).toBe(201);
      expect(((await response.json()) as SendMessageResponseDto).turn.status).toBe('complete');
      // Never stuck on Redis: at most one enqueue's timeout (the fold's), far below the turn's own bound.
      expect(Date.now() - started).toBeLessThan(ENQUEUE_TIMEOUT_MS + 5000);
    }
    const ready = await app.api('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ postgres: 'up', redis: 'down' });
    const before = (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
      context: { revision: number; foldPending: boolean };
    };
    expect(before.context).toMatchObject({ revision: 0, foldPending: true });

    proxy.restore();
    await waitFor(
      async () => {
        const detail = (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
          context: { revision: number };
        };
        return detail.context.revision > 0;
      },
      { timeoutMs: 20_000, what: 'the sweeper to enqueue the missed fold' },
    );
    expect(stub.requests.some((request) => request.kind === 'summary')).toBe(true);
  });

  it("catches up a thread's fold under its own lower trigger once Redis is back (the sweeper uses each thread's policy)", async () => {
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    // The deployment folds at 8 window messages; this thread at 4.
    expect(
      (await app.api(`/api/threads/${thread.id}/settings`, { method: 'PATCH', token, json: { trigger: 'messages=4' } }))
        .status,
    ).toBe(200);
    proxy.cut();
    for (let turn = 1; turn <= 2; turn += 1) {
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `own-trigger turn ${turn} CODE-${40 + turn}` },
      });
      expect(((await response.json()) as SendMessageResponseDto).turn.status).toBe('complete');
    }
    // 4 window messages: due by the thread's trigger, not by the deployment's; its enqueue failed with Redis down.
    const before = (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
      context: { revision: number; foldPending: boolean; windowEntries: number };
    };
    expect(before.context).toMatchObject({ revision: 0, foldPending: true, windowEntries: 4 });

    proxy.restore();
    await waitFor(
      async () => {
        const detail = (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
          context: { revision: number };
        };
        return detail.context.revision > 0;
      },
      { timeoutMs: 20_000, what: "the sweeper to enqueue the thread's missed fold" },
    );
    const context = (await (await app.api(`/api/threads/${thread.id}/context`, { token })).json()) as {
      summary: { text: string } | null;
    };
    expect(context.summary?.text).toContain('CODE-41');
  });
});
