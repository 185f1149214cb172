import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { socketChannelKey } from '../../src/realtime';
import type { ThreadDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { replyWithText } from '../support/openai-stub';
import { eventsOf, openTab, type Tab } from '../support/socket-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const ANSWER = Array.from({ length: 12 }, (_, index) => `word${index}`).join(' ');

/** The answer rebuilt from the tab's deltas since event `from`. */
function answerSeen(tab: Tab, from: number): string {
  return eventsOf(tab, 'message-delta', from)
    .map((delta) => delta.delta as string)
    .join('');
}

describe('a socket server alone on its Redis prefix', () => {
  const server = useChatServer({ stub: { responder: () => replyWithText(ANSWER, { chunkDelayMs: 5 }) } });
  const published: string[] = [];
  let listener: Redis;
  let second: TestApp | null = null;

  beforeAll(async () => {
    // Everything socket.io publishes for other processes, on this app's prefix.
    listener = new Redis(server.app.redisUrl);
    await listener.psubscribe(`${socketChannelKey(server.app.prefix)}#*`);
    listener.on('pmessage', (_pattern: string, channel: string) => published.push(channel));
  });
  afterAll(async () => {
    await second?.stop();
    listener?.disconnect();
  });

  async function turn(thread: ThreadDto, tabs: Tab[], content: string): Promise<void> {
    const marks = new Map(tabs.map((tab) => [tab, tab.events.length]));
    const { response } = await tabs[0]!.request<{ turnId: string }>('message-send', {
      threadId: thread.id,
      content,
      clientMessageId: content.replace(' ', '-'),
    });
    if (!response.ok) throw new Error(response.error.message);
    for (const tab of tabs) {
      const from = marks.get(tab) ?? 0;
      await waitFor(() => eventsOf(tab, 'turn-end', from).length > 0, { timeoutMs: 20_000, what: 'turn-end' });
      expect(answerSeen(tab, from)).toBe(ANSWER);
    }
  }

  it('keeps a turn to its own tabs, publishes once a second server shares the prefix, and stops after it left', async () => {
    const thread = (await (
      await server.app.api('/api/threads', { method: 'POST', token: server.token, json: {} })
    ).json()) as ThreadDto;
    const here = await server.openTab();
    expect((await here.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
    const io = server.app.application.io;
    expect(io?.alone).toBe(true);

    await turn(thread, [here], 'alone 1');
    expect(published).toEqual([]);

    // A second server of the same deployment: it announced itself before listening, so the first knows already.
    second = await startTestApp({
      database: { url: server.app.databaseUrl },
      authSecret: server.app.authSecret,
      env: { OPENAI_BASE_URL: server.stub.url, REDIS_PREFIX: server.app.prefix },
      mode: 'serve',
    });
    const there = await openTab(second, server.token);
    try {
      // Before any tab of the second server could join a room, both know they are not alone.
      expect(io?.alone).toBe(false);
      expect(second.application.io?.alone).toBe(false);
      expect((await there.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
      await turn(thread, [here, there], 'together 1');
      expect(published.length).toBeGreaterThan(0);
    } finally {
      there.close();
    }

    await second.stop();
    second = null;
    await waitFor(() => io?.alone === true, { timeoutMs: 5000, what: 'the first server to count itself alone again' });
    published.length = 0;
    await turn(thread, [here], 'alone 2');
    expect(published).toEqual([]);
  });
});
