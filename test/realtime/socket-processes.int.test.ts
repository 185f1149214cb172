import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/app/embedded/embedded-redis';
import { findFreePort } from '../../src/app/embedded/process-tools';
import type { MessageDto, ThreadDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { replyWithText } from '../support/openai-stub';
import { eventsOf, openTab, type Tab } from '../support/socket-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const ANSWER = Array.from({ length: 30 }, (_, index) => `part${index}`).join(' ');

/** Each event of a turn exactly once, deltas contiguous, adding up to the answer. */
function expectWholeTurnOnce(tab: Tab, turnId: string): void {
  expect(eventsOf(tab, 'message-created')).toHaveLength(1);
  expect(eventsOf(tab, 'message-start')).toHaveLength(1);
  expect(eventsOf(tab, 'turn-end')).toEqual([expect.objectContaining({ turnId, status: 'complete' })]);
  const ends = eventsOf(tab, 'message-end');
  expect(ends).toHaveLength(1);
  let text = '';
  for (const delta of eventsOf(tab, 'message-delta')) {
    expect(delta.offset).toBe(text.length);
    text += delta.delta as string;
  }
  expect(text).toBe(ANSWER);
  expect((ends[0]!.message as MessageDto).content).toBe(ANSWER);
}

describe('sockets across server processes', () => {
  const server = useChatServer({ stub: { responder: () => replyWithText(ANSWER, { chunkDelayMs: 10 }) } });
  let second: TestApp;
  let worker: TestApp;
  const tabs: Tab[] = [];

  beforeAll(async () => {
    // Same database and Redis prefix: three processes of one deployment.
    const first = server.app;
    const shared = {
      database: { url: first.databaseUrl },
      authSecret: first.authSecret,
      env: { OPENAI_BASE_URL: server.stub.url, REDIS_PREFIX: first.prefix },
    };
    second = await startTestApp({ ...shared, mode: 'serve' });
    worker = await startTestApp({ ...shared, mode: 'worker' });
  });
  // Runs before the fixture's afterAll (hooks stack): these processes stop before the first one.
  afterAll(async () => {
    for (const tab of tabs) tab.close();
    await worker?.stop();
    await second?.stop();
  });

  const tab = async (app: TestApp) => {
    const opened = await openTab(app, server.token);
    tabs.push(opened);
    return opened;
  };

  it('delivers a turn running in one process to the tabs of both, each event once', async () => {
    const thread = (await (
      await server.app.api('/api/threads', { method: 'POST', token: server.token, json: {} })
    ).json()) as ThreadDto;
    const here = await tab(server.app);
    const there = await tab(second);
    for (const view of [here, there])
      expect((await view.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);

    const { response } = await here.request<{ turnId: string }>('message-send', {
      threadId: thread.id,
      content: 'hello',
      clientMessageId: 'processes-1',
    });
    if (!response.ok) throw new Error(response.error.message);
    for (const view of [here, there]) {
      await waitFor(() => eventsOf(view, 'turn-end').length > 0, { timeoutMs: 30_000, what: 'the turn to end' });
    }
    // Late duplicates would arrive after turn-end. A rename by the process that ran the turn is published after all
    // of its events, through the same path: once both tabs have it, a duplicate sent before it would be in too.
    const barrier = `barrier ${thread.id}`;
    const renamed = await server.app.api(`/api/threads/${thread.id}`, {
      method: 'PATCH',
      token: server.token,
      json: { title: barrier },
    });
    expect(renamed.status).toBe(200);
    for (const view of [here, there]) {
      await waitFor(
        () => eventsOf(view, 'thread-updated').some((event) => (event.thread as ThreadDto).title === barrier),
        {
          timeoutMs: 10_000,
          what: 'the rename published after the turn',
        },
      );
    }
    expectWholeTurnOnce(here, response.turnId);
    expectWholeTurnOnce(there, response.turnId);
    expect(server.app.application.io?.connectedSockets).toBe(1);
    expect(second.application.io?.connectedSockets).toBe(1);
    expect(worker.application.io).toBeNull();
  });

  it("reaches the servers' tabs with events a worker process publishes", async () => {
    const thread = (await (
      await server.app.api('/api/threads', { method: 'POST', token: server.token, json: {} })
    ).json()) as ThreadDto;
    const here = await tab(server.app);
    const there = await tab(second);
    for (const view of [here, there])
      expect((await view.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
    worker.application.deps.events.publish({
      type: 'summary-updated',
      threadId: thread.id,
      revision: 1,
      coveredThroughSeq: 4,
      tokens: 120,
    });
    for (const view of [here, there]) {
      await waitFor(() => eventsOf(view, 'summary-updated').length > 0, { timeoutMs: 10_000, what: 'summary-updated' });
      expect(eventsOf(view, 'summary-updated')).toEqual([
        { threadId: thread.id, revision: 1, coveredThroughSeq: 4, tokens: 120 },
      ]);
    }
  });
});

describe('sockets with Redis stopped', () => {
  let redis: EmbeddedRedis;
  let redisDir: string;
  let view: Tab | null = null;

  // Registered before the fixture: its Redis starts first and stops after the app (hooks stack).
  beforeAll(async () => {
    redisDir = await mkdtemp(path.join(tmpdir(), 'chat-socket-redis-'));
    redis = await startEmbeddedRedis({ dataDir: redisDir, port: await findFreePort(), persist: false });
  });
  afterAll(async () => {
    await redis?.stop();
    await rm(redisDir, { recursive: true, force: true });
  });
  const server = useChatServer({
    stub: { responder: () => replyWithText(ANSWER, { chunkDelayMs: 5 }) },
    // A server process without the fold worker: BullMQ's worker.close() waits for Redis to come back.
    env: () => ({ REDIS_URL: redis.url }),
    app: { mode: 'serve' },
  });

  it('still streams every event to the tabs of this process', async () => {
    const thread = (await (
      await server.app.api('/api/threads', { method: 'POST', token: server.token, json: {} })
    ).json()) as ThreadDto;
    view = await server.openTab();
    expect((await view.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
    await redis.stop();

    const { response } = await view.request<{ turnId: string }>('message-send', {
      threadId: thread.id,
      content: 'hello offline',
      clientMessageId: 'offline-1',
    });
    if (!response.ok) throw new Error(response.error.message);
    await waitFor(() => eventsOf(view!, 'turn-end').length > 0, { timeoutMs: 30_000, what: 'the turn to end' });
    expectWholeTurnOnce(view, response.turnId);
    // A tab connecting during the outage is served too.
    const late = await openTab(server.app, server.token);
    const joined = await late.request<{ messages: MessageDto[] }>('thread-join', { threadId: thread.id });
    late.close();
    expect(joined.response.ok && joined.response.messages.map((message) => message.content)).toEqual([
      'hello offline',
      ANSWER,
    ]);
  });
});
