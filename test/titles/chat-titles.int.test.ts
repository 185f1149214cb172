import { describe, expect, it } from 'vitest';
import type { CostReportDto } from '../../src/shared/admin-api';
import type { ModelCallListDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import type { ThreadJoinResult } from '../../src/shared/socket-events';
import { TITLE_SYSTEM_PROMPT } from '../../src/core/titles';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { useChatServer } from '../support/chat-server';
import { echoResponder, replyWithText, type StubRequestBody } from '../support/openai-stub';
import { eventsOf, openTab } from '../support/socket-client';
import { classifyRequest } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { waitForIdleSummaryQueue } from '../memory/memory-test-kit';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** The title job's request: its system message is the title prompt's. */
function classifyWithTitles(body: StubRequestBody): string {
  const first = body.messages[0];
  return first?.role === 'system' && wireContentText(first.content) === TITLE_SYSTEM_PROMPT
    ? 'title'
    : classifyRequest(body);
}

/** A gate the stub's title answers wait at while it is closed. */
function gate() {
  let open: () => void = () => undefined;
  let promise: Promise<void> | null = null;
  return {
    close() {
      promise = new Promise((resolve) => {
        open = resolve;
      });
    },
    open: () => {
      open();
      promise = null;
    },
    wait: () => promise ?? Promise.resolve(),
  };
}

async function json<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

describe('chat titles with a model endpoint: a background title job by the summarizer model', () => {
  const titleGate = gate();
  const server = useChatServer({
    stub: {
      classifyRequest: classifyWithTitles,
      responder: async (request) => {
        if (request.kind !== 'title') return echoResponder(request);
        await titleGate.wait();
        return replyWithText('Title: "Lisbon team offsite."');
      },
    },
    // The production default (the test harness makes titles from words), and a summarizer model of its own.
    env: { CHAT_TITLES: 'model', SUMMARY_MODEL: 'gpt-4o' },
  });
  const api = (path: string, init: Parameters<TestApp['api']>[1] = {}) =>
    server.app.api(path, { token: server.token, ...init });
  const newThread = async () => json<ThreadDto>(await api('/api/threads', { method: 'POST', json: {} }), 201);
  const titleOf = async (threadId: string) => (await json<ThreadDto>(await api(`/api/threads/${threadId}`), 200)).title;
  const titleRequests = () => server.stub.requests.filter((request) => request.kind === 'title');

  it('titles a thread after its first exchange over sockets, never holding up the answer, and records the call', async () => {
    const thread = await newThread();
    expect(thread.title).toBe('New chat');
    const tab = await server.openTab();
    const joined = await tab.request<ThreadJoinResult>('thread-join', { threadId: thread.id });
    expect(joined.response.ok).toBe(true);
    const before = titleRequests().length;

    // The title call waits at the gate: the answer and the turn's end come all the same.
    titleGate.close();
    const sent = await tab.request<{ turnId: string }>('message-send', {
      threadId: thread.id,
      content: 'can you help me plan a team offsite in Lisbon next spring?',
      clientMessageId: 'first-message',
    });
    expect(sent.response.ok).toBe(true);
    await waitFor(() => eventsOf(tab, 'turn-end').length > 0, { timeoutMs: 30_000, what: 'the turn end' });
    await waitFor(() => titleRequests().length > before, { timeoutMs: 30_000, what: 'the title request' });
    expect(eventsOf(tab, 'thread-updated')).toEqual([]);
    expect(await titleOf(thread.id)).toBe('New chat');
    const request = titleRequests().at(-1)!;
    expect(request.body.model).toBe('gpt-4o');
    expect(JSON.stringify(request.body.messages)).toContain('plan a team offsite in Lisbon next spring');
    expect(JSON.stringify(request.body.messages)).toContain('stub reply to: can you help me plan');

    titleGate.open();
    await waitFor(() => eventsOf(tab, 'thread-updated').length > 0, { timeoutMs: 30_000, what: 'thread-updated' });
    expect(eventsOf(tab, 'thread-updated')[0]).toMatchObject({
      threadId: thread.id,
      thread: { id: thread.id, title: 'Lisbon team offsite' },
    });
    expect(await titleOf(thread.id)).toBe('Lisbon team offsite');
    const listed = await json<{ threads: ThreadDto[] }>(await api('/api/threads?limit=50'), 200);
    expect(listed.threads.find((candidate) => candidate.id === thread.id)?.title).toBe('Lisbon team offsite');

    // The title call is a model call of the thread with its own purpose, and the admin's costs count it.
    await waitForIdleSummaryQueue(server.app);
    const calls = await json<ModelCallListDto>(
      await server.app.api(`/api/admin/threads/${thread.id}/model-calls`, { token: ADMIN_TOKEN }),
      200,
    );
    expect(calls.calls.map((call) => [call.purpose, call.model])).toEqual([
      ['chat', 'gpt-4o-mini'],
      ['title', 'gpt-4o'],
    ]);
    const costs = await json<CostReportDto>(
      await server.app.api('/api/admin/costs?by=thread&days=1', { token: ADMIN_TOKEN }),
      200,
    );
    expect(costs.rows.find((row) => row.key === thread.id)).toMatchObject({ label: 'Lisbon team offsite', calls: 2 });

    // Later turns ask for no title.
    const requests = titleRequests().length;
    await json<SendMessageResponseDto>(
      await api(`/api/threads/${thread.id}/messages`, { method: 'POST', json: { content: 'And the budget?' } }),
      201,
    );
    await waitForIdleSummaryQueue(server.app);
    expect(titleRequests()).toHaveLength(requests);
  });

  it("a user's rename wins: made while the title call runs, it is never overwritten", async () => {
    const thread = await newThread();
    const before = titleRequests().length;
    titleGate.close();
    await json<SendMessageResponseDto>(
      await api(`/api/threads/${thread.id}/messages`, { method: 'POST', json: { content: 'Plan the offsite' } }),
      201,
    );
    await waitFor(() => titleRequests().length > before, { timeoutMs: 30_000, what: 'the title request' });
    const renamed = await json<ThreadDto>(
      await api(`/api/threads/${thread.id}`, { method: 'PATCH', json: { title: 'My own title' } }),
      200,
    );
    expect(renamed.title).toBe('My own title');
    titleGate.open();
    await waitForIdleSummaryQueue(server.app);
    expect(await titleOf(thread.id)).toBe('My own title');
  });

  it('a thread renamed before its first exchange makes no title call; a branch of a titled thread is "<title> (branch)"', async () => {
    const renamedFirst = await newThread();
    await api(`/api/threads/${renamedFirst.id}`, { method: 'PATCH', json: { title: 'Named up front' } });
    const before = titleRequests().length;
    const sent = await json<SendMessageResponseDto>(
      await api(`/api/threads/${renamedFirst.id}/messages`, { method: 'POST', json: { content: 'Hello there' } }),
      201,
    );
    await waitForIdleSummaryQueue(server.app);
    expect(titleRequests()).toHaveLength(before);
    expect(await titleOf(renamedFirst.id)).toBe('Named up front');

    const answer = sent.messages.find((message) => message.role === 'assistant')!;
    const branch = await json<ThreadDto>(
      await api(`/api/threads/${renamedFirst.id}/fork`, { method: 'POST', json: { atMessageId: answer.id } }),
      201,
    );
    expect(branch.title).toBe('Named up front (branch)');
    await json<SendMessageResponseDto>(
      await api(`/api/threads/${branch.id}/messages`, { method: 'POST', json: { content: 'Another way' } }),
      201,
    );
    await waitForIdleSummaryQueue(server.app);
    expect(titleRequests()).toHaveLength(before);
    expect(await titleOf(branch.id)).toBe('Named up front (branch)');
  });
});

describe('chat titles with the offline model: the first message’s words', () => {
  it('titles the first exchange over REST and sockets; a rename is never overwritten', async () => {
    const app = await startTestApp({ env: { CHAT_TITLES: 'model' } });
    try {
      const { token } = await app.guest();
      const thread = await json<ThreadDto>(await app.api('/api/threads', { method: 'POST', token, json: {} }), 201);
      const tab = await openTab(app, token);
      expect((await tab.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
      await json<SendMessageResponseDto>(
        await app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token,
          json: { content: 'can you help me plan a team offsite in Lisbon next spring?' },
        }),
        201,
      );
      const title = async () =>
        (await json<ThreadDto>(await app.api(`/api/threads/${thread.id}`, { token }), 200)).title;
      await waitFor(async () => (await title()) !== 'New chat', { timeoutMs: 15_000, what: 'the title' });
      expect(await title()).toBe('Can you help me plan');
      await waitFor(() => eventsOf(tab, 'thread-updated').length > 0, { timeoutMs: 15_000, what: 'thread-updated' });
      expect(eventsOf(tab, 'thread-updated')[0]).toMatchObject({ thread: { title: 'Can you help me plan' } });
      tab.close();

      await app.api(`/api/threads/${thread.id}`, { method: 'PATCH', token, json: { title: 'Offsite' } });
      await json<SendMessageResponseDto>(
        await app.api(`/api/threads/${thread.id}/messages`, { method: 'POST', token, json: { content: 'More' } }),
        201,
      );
      expect(await title()).toBe('Offsite');
    } finally {
      await app.stop();
    }
  });

  it('forgetting a message of the first exchange takes its automatic title back to "New chat"; a later one does not', async () => {
    const app = await startTestApp({ env: { CHAT_TITLES: 'words' } });
    try {
      const { token } = await app.guest();
      const thread = await json<ThreadDto>(await app.api('/api/threads', { method: 'POST', token, json: {} }), 201);
      const send = (content: string) =>
        app
          .api(`/api/threads/${thread.id}/messages`, { method: 'POST', token, json: { content } })
          .then((response) => json<SendMessageResponseDto>(response, 201));
      const first = await send('my locker code is LOCK-4242 please keep it');
      const title = async () =>
        (await json<ThreadDto>(await app.api(`/api/threads/${thread.id}`, { token }), 200)).title;
      await waitFor(async () => (await title()) !== 'New chat', { timeoutMs: 15_000, what: 'the title' });
      expect(await title()).toContain('LOCK-4242');
      const later = await send('and what is the weather like');
      const forget = (messageId: string) =>
        app.api(`/api/threads/${thread.id}/messages/${messageId}`, { method: 'DELETE', token });
      expect((await forget(later.userMessage.id)).status).toBe(200);
      expect(await title()).toContain('LOCK-4242');
      expect((await forget(first.userMessage.id)).status).toBe(200);
      expect(await title()).toBe('New chat');
    } finally {
      await app.stop();
    }
  });
});
