import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/app/embedded/embedded-redis';
import { findFreePort } from '../../src/app/embedded/process-tools';
import type { MessageDto, ThreadDto } from '../../src/shared/api';
import { replyWithText, startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
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
  let stub: OpenAIStub;
  let first: TestApp;
  let second: TestApp;
  let worker: TestApp;
  let token: string;
  const tabs: Tab[] = [];

  beforeAll(async () => {
    stub = await startOpenAIStub({ responder: () => replyWithText(ANSWER, { chunkDelayMs: 10 }) });
    first = await startTestApp({ env: { OPENAI_BASE_URL: stub.url } });
    // Same database and Redis prefix: three processes of one deployment.
    const shared = { database: { url: first.databaseUrl }, authSecret: first.authSecret, env: { OPENAI_BASE_URL: stub.url, REDIS_PREFIX: first.prefix } };
    second = await startTestApp({ ...shared, mode: 'serve' });
    worker = await startTestApp({ ...shared, mode: 'worker' });
    ({ token } = await first.guest());
  });
  afterAll(async () => {
    for (const tab of tabs) tab.close();
    await worker?.stop();
    await second?.stop();
    await first?.stop();
    await stub?.close();
  });

  const tab = async (app: TestApp) => {
    const opened = await openTab(app, token);
    tabs.push(opened);
    return opened;
  };

  it('delivers a turn running in one process to the tabs of both, each event once', async () => {
    const thread = (await (await first.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const here = await tab(first);
    const there = await tab(second);
    for (const view of [here, there]) expect((await view.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);

    const { response } = await here.request<{ turnId: string }>('message-send', { threadId: thread.id, content: 'hello', clientMessageId: 'processes-1' });
    if (!response.ok) throw new Error(response.error.message);
    for (const view of [here, there]) {
      await waitFor(() => eventsOf(view, 'turn-end').length > 0, { timeoutMs: 30_000, what: 'the turn to end' });
    }
    // Late duplicates would arrive after turn-end: give them a moment to show up.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expectWholeTurnOnce(here, response.turnId);
    expectWholeTurnOnce(there, response.turnId);
    expect(first.application.io?.connectedSockets).toBe(1);
    expect(second.application.io?.connectedSockets).toBe(1);
    expect(worker.application.io).toBeNull();
  });

  it("reaches the servers' tabs with events a worker process publishes", async () => {
    const thread = (await (await first.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const here = await tab(first);
    const there = await tab(second);
    for (const view of [here, there]) expect((await view.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
    worker.application.deps.events.publish({ type: 'summary-updated', threadId: thread.id, revision: 1, coveredThroughSeq: 4, tokens: 120 });
    for (const view of [here, there]) {
      await waitFor(() => eventsOf(view, 'summary-updated').length > 0, { timeoutMs: 10_000, what: 'summary-updated' });
      expect(eventsOf(view, 'summary-updated')).toEqual([{ threadId: thread.id, revision: 1, coveredThroughSeq: 4, tokens: 120 }]);
    }
  });
});

describe('sockets with Redis stopped', () => {
  let stub: OpenAIStub;
  let redis: EmbeddedRedis;
  let redisDir: string;
  let app: TestApp;
  let token: string;
  let view: Tab | null = null;

  beforeAll(async () => {
    redisDir = await mkdtemp(path.join(tmpdir(), 'chat-socket-redis-'));
    redis = await startEmbeddedRedis({ dataDir: redisDir, port: await findFreePort(), persist: false });
    stub = await startOpenAIStub({ responder: () => replyWithText(ANSWER, { chunkDelayMs: 5 }) });
    // A server process without the fold worker: BullMQ's worker.close() waits for Redis to come back.
    app = await startTestApp({ env: { OPENAI_BASE_URL: stub.url, REDIS_URL: redis.url }, mode: 'serve' });
    ({ token } = await app.guest());
  });
  afterAll(async () => {
    view?.close();
    await app?.stop();
    await redis?.stop();
    await stub?.close();
    await rm(redisDir, { recursive: true, force: true });
  });

  it('still streams every event to the tabs of this process', async () => {
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    view = await openTab(app, token);
    expect((await view.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
    await redis.stop();

    const { response } = await view.request<{ turnId: string }>('message-send', { threadId: thread.id, content: 'hello offline', clientMessageId: 'offline-1' });
    if (!response.ok) throw new Error(response.error.message);
    await waitFor(() => eventsOf(view!, 'turn-end').length > 0, { timeoutMs: 30_000, what: 'the turn to end' });
    expectWholeTurnOnce(view, response.turnId);
    // A tab connecting during the outage is served too.
    const late = await openTab(app, token);
    const joined = await late.request<{ messages: MessageDto[] }>('thread-join', { threadId: thread.id });
    late.close();
    expect(joined.response.ok && joined.response.messages.map((message) => message.content)).toEqual(['hello offline', ANSWER]);
  });
});
