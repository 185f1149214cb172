import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageDto, ThreadDto } from '../../src/shared/api';
import {
  echoResponder,
  lastUserText,
  replyWithError,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
  type StubRequest,
} from '../support/openai-stub';
import { connectError, openTab, type Tab } from '../support/socket-client';
import { classifyRequest as classifySummary } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { memoryKit } from '../memory/memory-test-kit';
import {
  classifyRequest,
  lastMessage,
  responder,
  testTools,
  textOf,
  threadHelpers,
  isServerNote,
  type ThreadHelpers,
} from '../tools/tool-test-kit';

// Issue 13 item 6: every model-spending route is bounded per user, and so is the work one user can start.

describe('model-spending routes share the send limit (RATE_LIMIT_PER_MINUTE)', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let kit: ReturnType<typeof memoryKit>;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest: classifySummary, responder: echoResponder });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        RATE_LIMIT_PER_MINUTE: '4',
        SUMMARY_TRIGGER: 'messages=6',
        SUMMARY_KEEP: 'messages=2',
      },
    });
    kit = memoryKit(app, (await app.guest()).token);
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('counts a forget that rebuilds the summary and a regeneration like sends, and loses nothing it refuses', async () => {
    const thread = await kit.createThread();
    const first = await kit.send(thread.id, 'Remember CODE-1.');
    await kit.send(thread.id, 'Remember CODE-2.');
    await kit.send(thread.id, 'Remember CODE-3.');
    await kit.waitForFoldThrough(thread.id, 2);

    // The fourth spend: forgetting a message the summary covered rebuilds it with the model.
    const forget = await app.api(`/api/threads/${thread.id}/messages/${first.userMessage.id}`, {
      method: 'DELETE',
      token: kit.token,
    });
    expect(forget.status).toBe(200);
    expect(await forget.json()).toMatchObject({ memoryRebuilding: true });

    const regenerate = await app.api(`/api/threads/${thread.id}/regenerate`, { method: 'POST', token: kit.token });
    expect(regenerate.status).toBe(429);
    expect(await regenerate.json()).toMatchObject({
      error: { code: 'RATE_LIMITED', message: expect.stringMatching(/try again in \d+ s/) },
    });
    const send = await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token: kit.token,
      json: { content: 'one more' },
    });
    expect(send.status).toBe(429);

    // Refused means untouched: the last answer is still the current one, and nothing new was stored.
    const transcript = await kit.transcript(thread.id);
    expect(transcript.filter((message) => message.superseded)).toEqual([]);
    expect(transcript.some((message) => message.content === 'one more')).toBe(false);

    // Forgetting what only the window holds costs no model call, so it is never refused.
    const inWindow = transcript
      .filter((message) => message.role === 'assistant' && !message.deleted)
      .at(-1) as MessageDto;
    const windowForget = await app.api(`/api/threads/${thread.id}/messages/${inWindow.id}?only=true`, {
      method: 'DELETE',
      token: kit.token,
    });
    expect(windowForget.status).toBe(200);
  });
});

describe('retry: through the send limit and the queue bound', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let kit: ReturnType<typeof memoryKit>;
  let failing = true;

  beforeAll(async () => {
    stub = await startOpenAIStub({
      responder: (request) => {
        if (failing) return replyWithError(400, { message: 'the model refused' });
        // The retried answer takes a while, so the parallel retries arrive while it runs.
        return replyWithText(`answer to ${lastUserText(request.body)}`, { firstByteDelayMs: 1500 });
      },
    });
    app = await startTestApp({
      env: { OPENAI_BASE_URL: stub.url, RATE_LIMIT_PER_MINUTE: '3', MODEL_MAX_RETRIES: '0' },
    });
    kit = memoryKit(app, (await app.guest()).token);
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('queues one turn for parallel retries of one answer, and counts each against the limit', async () => {
    const thread = await kit.createThread();
    const sent = await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token: kit.token,
      json: { content: 'please answer' },
    });
    const body = (await sent.json()) as { userMessage: MessageDto; turn: { status: string } };
    expect(body.turn.status).toBe('error');
    failing = false;

    const retry = () =>
      app.api(`/api/threads/${thread.id}/messages/${body.userMessage.id}/retry`, { method: 'POST', token: kit.token });
    const responses = await Promise.all([retry(), retry(), retry()]);
    const outcomes = await Promise.all(
      responses.map(async (response) => [
        response.status,
        ((await response.json()) as { error?: { code: string } }).error?.code ?? 'ok',
      ]),
    );
    // Three spends against a limit of 3 with the send: two pass the limit, one of them queues the turn.
    expect(outcomes.map(String).sort()).toEqual(['201,ok', '409,CONFLICT', '429,RATE_LIMITED']);
    const retries = await app.application.db.turn.findMany({ where: { threadId: thread.id, kind: 'retry' } });
    expect(retries).toHaveLength(1);
    expect(
      (await kit.transcript(thread.id)).filter((message) => message.content === 'answer to please answer'),
    ).toHaveLength(1);
  });
});

describe('tool work per user message', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;

  // Tools a call may use: a round past the limit still sends the schemas, with tool_choice none.
  const hasTools = (request: StubRequest) =>
    (request.body.tools?.length ?? 0) > 0 && request.body.tool_choice !== 'none';
  function chat(request: StubRequest) {
    const last = lastMessage(request);
    if (last?.role === 'tool') return replyWithText('Tools answered.');
    if (isServerNote(last)) {
      // A small model that wants more on every result: with tools offered it starts another analysis.
      return hasTools(request)
        ? replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 10 } }])
        : replyWithText('Finished with what I have.');
    }
    const user = lastUserText(request.body);
    if (user === 'three calls')
      return replyWithToolCalls(['a', 'b', 'c'].map((text) => ({ name: 'slow_echo', arguments: { text, ms: 10 } })));
    if (user === 'two analyses')
      return replyWithToolCalls([
        { name: 'analyze_thread', arguments: { pace_ms: 400 } },
        { name: 'analyze_thread', arguments: { pace_ms: 400 } },
      ]);
    if (user === 'keep analyzing') return replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 10 } }]);
    return replyWithText(`plain answer to ${user}`);
  }

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: responder(chat) });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        MAX_TOOL_CALLS_PER_MESSAGE: '2',
        MAX_ASYNC_RUNS_PER_THREAD: '1',
        MAX_TOOL_FOLLOW_UPS: '1',
      },
      tuning: { extraTools: testTools() },
    });
    helpers = await threadHelpers(app);
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  const chatRequests = () => stub.requests.filter((request) => request.kind === 'chat');

  it('runs at most MAX_TOOL_CALLS_PER_MESSAGE calls of one answer and tells the model and the user why not the rest', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'three calls');
    const tools = result.messages.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(tools.slice(0, 2)).toEqual(['echo: a', 'echo: b']);
    expect(tools[2]).toMatch(/^Not run: one answer may make at most 2 tool calls \(MAX_TOOL_CALLS_PER_MESSAGE\)/);
    // The model's next call carries the refusal as that call's result.
    const next = chatRequests().at(-1);
    expect(next?.body.messages.filter((message) => message.role === 'tool').map(textOf)).toContain(tools[2]);
  });

  it('starts no more async runs than MAX_ASYNC_RUNS_PER_THREAD and answers the others "not run"', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'two analyses');
    const tools = result.messages.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(tools[0]).toMatch(/^Started analyze_thread in the background/);
    expect(tools[1]).toMatch(
      /^Not run: this conversation already has 1 background tool runs going.*MAX_ASYNC_RUNS_PER_THREAD/,
    );
    expect(await app.application.db.toolRun.count({ where: { threadId: thread.id } })).toBe(1);
  });

  it('ends a chain of tool results asking for more tools at MAX_TOOL_FOLLOW_UPS, with a notice for both', async () => {
    const thread = await helpers.newThread();
    await helpers.send(thread.id, 'keep analyzing');
    // Run 1 (the user's turn) -> follow-up 1 starts run 2 -> follow-up 2 is past the cap: no tools, a notice.
    await waitFor(
      async () =>
        (await helpers.messages(thread.id)).some(
          (message) => message.role === 'assistant' && message.content === 'Finished with what I have.',
        ),
      { timeoutMs: 30_000, what: 'the answer without tools' },
    );
    const transcript = await helpers.messages(thread.id);
    const notice = transcript.find((message) => message.role === 'system' && message.toolRunId === null);
    expect(notice?.content).toMatch(/^Tool limit reached: .* 1 times in a row .*\(MAX_TOOL_FOLLOW_UPS\)/);
    expect(await app.application.db.toolRun.count({ where: { threadId: thread.id } })).toBe(2);
    // The call that read the notice (another thread's follow-up may come later): same schemas, no call allowed.
    const last = chatRequests().findLast((request) =>
      request.body.messages.map(textOf).some((text) => text.includes(notice?.content ?? '?')),
    );
    expect(last?.body.tools?.length).toBeGreaterThan(0);
    expect(last?.body.tool_choice).toBe('none');
    // The notice is the thread's to keep, in order, before the answer it explains.
    expect(transcript.indexOf(notice as MessageDto)).toBeLessThan(
      transcript.findIndex((message) => message.content === 'Finished with what I have.'),
    );
  });
});

describe('threads per user (MAX_THREADS_PER_USER)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { MAX_THREADS_PER_USER: '3' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('creates exactly the cap under concurrent requests, and again after a delete', async () => {
    const { token } = await app.guest();
    const create = () => app.api('/api/threads', { method: 'POST', token, json: {} });
    const responses = await Promise.all(Array.from({ length: 6 }, create));
    expect(responses.map((response) => response.status).sort()).toEqual([201, 201, 201, 409, 409, 409]);
    const refused = responses.find((response) => response.status === 409) as Response;
    expect(await refused.json()).toMatchObject({
      error: { code: 'QUOTA_EXCEEDED', message: expect.stringContaining('MAX_THREADS_PER_USER') },
    });
    const made = (await Promise.all(
      responses.filter((response) => response.status === 201).map((response) => response.json()),
    )) as ThreadDto[];
    expect((await app.api(`/api/threads/${made[0]?.id}`, { method: 'DELETE', token })).status).toBe(204);
    expect((await create()).status).toBe(201);
    // Another user has a cap of their own.
    const other = await app.guest();
    expect((await app.api('/api/threads', { method: 'POST', token: other.token, json: {} })).status).toBe(201);
  });
});

describe('socket limits', () => {
  let app: TestApp;
  const tabs: Tab[] = [];
  beforeAll(async () => {
    app = await startTestApp({ env: { SOCKET_EVENTS_PER_MINUTE: '5', MAX_SOCKETS_PER_USER: '2' } });
  });
  afterAll(async () => {
    for (const tab of tabs) tab.close();
    await app?.stop();
  });

  it('refuses a connection past MAX_SOCKETS_PER_USER until one closes', async () => {
    const { token } = await app.guest();
    tabs.push(await openTab(app, token), await openTab(app, token));
    const refused = await connectError(app, { token });
    expect(refused.data).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('open connections') });
    // Another user is not affected.
    tabs.push(await openTab(app, (await app.guest()).token));
    tabs.shift()?.close();
    await waitFor(
      async () => {
        const error = await openTab(app, token).then(
          (tab) => {
            tabs.push(tab);
            return null;
          },
          (failure: unknown) => failure,
        );
        return error === null;
      },
      { timeoutMs: 5000, what: 'a slot after a disconnect' },
    );
  });

  it('answers RATE_LIMITED, unrun, to events past SOCKET_EVENTS_PER_MINUTE on one socket', async () => {
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const storm = await openTab(app, token);
    const calm = await openTab(app, token);
    tabs.push(storm, calm);
    const joins = [];
    for (let index = 0; index < 7; index += 1)
      joins.push((await storm.request('thread-join', { threadId: thread.id })).response);
    expect(joins.slice(0, 5).every((response) => response.ok)).toBe(true);
    expect(joins.slice(5)).toEqual([
      { ok: false, error: expect.objectContaining({ code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) }) },
      { ok: false, error: expect.objectContaining({ code: 'RATE_LIMITED' }) },
    ]);
    // A refused send stores nothing; the user's other socket has its own budget.
    const send = await storm.request('message-send', { threadId: thread.id, content: 'from the storm' });
    expect(send.response).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
    expect((await calm.request('thread-join', { threadId: thread.id })).response.ok).toBe(true);
    expect(await app.application.db.message.count({ where: { threadId: thread.id } })).toBe(0);
  });
});
