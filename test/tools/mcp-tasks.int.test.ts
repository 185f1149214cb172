import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ToolRunDto } from '../../src/shared/api';
import {
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
  type StubRequest,
} from '../support/openai-stub';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  assertRequestsValid,
  classifyRequest,
  lastMessage,
  responder,
  threadHelpers,
  isServerNote,
  serverNotesOf,
  type ThreadHelpers,
} from './tool-test-kit';

const runIdOf = (content: string | undefined) => /as run ([0-9a-f-]{36})/.exec(content ?? '')?.[1] ?? '';
const isFollowUp = (request: StubRequest) => request.kind === 'chat' && isServerNote(lastMessage(request));
const notesOf = serverNotesOf;

function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (isServerNote(last)) return replyWithText('The background job has ended.');
  if (last?.role === 'tool') return replyWithText('It runs in the background.');
  const user = lastUserText(request.body);
  if (user === 'job') {
    return replyWithToolCalls([
      { name: 'remote__slow_job', arguments: { label: 'alpha', steps: 10, stepMs: 500 } },
      { name: 'remote__slow_job', arguments: { label: 'omega', steps: 10, stepMs: 500 } },
    ]);
  }
  if (user === 'long job')
    return replyWithToolCalls([{ name: 'remote__slow_job', arguments: { label: 'beta', steps: 200, stepMs: 300 } }]);
  if (user === 'failing job')
    return replyWithToolCalls([
      { name: 'remote__slow_job', arguments: { label: 'gamma', steps: 2, stepMs: 200, fail: true } },
    ]);
  if (user === 'short deadline')
    return replyWithToolCalls([{ name: 'hurried__slow_job', arguments: { label: 'delta', steps: 200, stepMs: 300 } }]);
  return replyWithText('noted');
}

describe('MCP task-based tools (Streamable HTTP): submitted, polled by task id, cancelled on the server', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;
  let remote: McpTestServer;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: responder(chat) });
    remote = await startMcpTestServer();
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        // One job at a time per worker: two tasks working at once prove no slot is held while they work.
        WORKER_CONCURRENCY: '1',
        MCP_SERVERS: JSON.stringify({
          remote: { url: remote.url, mode: 'async' },
          hurried: { url: remote.url, mode: 'async', timeoutMs: 2000, allow: ['slow_job'] },
        }),
      },
      tuning: { toolCancelPollMs: 100 },
    });
    helpers = await threadHelpers(app);
  });
  beforeEach(() => stub.reset());
  afterAll(async () => {
    await app?.stop();
    await remote?.close();
    await stub?.close();
  });

  const getRun = async (runId: string) =>
    (await (await app.api(`/api/tool-runs/${runId}`, { token: helpers.token })).json()) as ToolRunDto;
  const row = (runId: string) => app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } });
  const reportedNote = (runId: string) =>
    stub.requests
      .filter(isFollowUp)
      .flatMap(notesOf)
      .find((note) => note.includes(`(run ${runId},`));

  it('submits a task, holds no worker slot while it works, streams its progress, and delivers the result in a follow-up', async () => {
    const thread = await helpers.newThread();
    const events = helpers.record(thread.id);
    const result = await helpers.send(thread.id, 'job');
    const [runId, otherId] = result.messages
      .filter((message) => message.role === 'tool')
      .map((message) => runIdOf(message.content));
    expect(result.messages.at(-1)?.content).toBe('It runs in the background.');
    await waitFor(async () => (await row(runId!)).taskId !== null && (await row(otherId!)).taskId !== null, {
      timeoutMs: 15_000,
      what: 'both task ids on the runs',
    });
    const [submitted, other] = [await row(runId!), await row(otherId!)];
    expect([submitted.taskId, other.taskId].sort()).toEqual(remote.tasks.slice(-2).sort());
    expect(submitted.deadlineAt!.getTime()).toBeGreaterThan(Date.now());
    // With one job slot, both tasks work on the server at once: no slot is held while a task works.
    expect([submitted.status, other.status]).toEqual(['running', 'running']);
    expect(
      await Promise.all(remote.tasks.slice(-2).map(async (taskId) => (await remote.taskStatus(taskId))?.status)),
    ).toEqual(['working', 'working']);

    await waitFor(() => reportedNote(runId!) !== undefined && reportedNote(otherId!) !== undefined, {
      timeoutMs: 40_000,
      what: 'the follow-up with the results',
    });
    expect(reportedNote(runId!)).toContain('job alpha done after 10 steps');
    expect(reportedNote(otherId!)).toContain('job omega done after 10 steps');
    expect(await getRun(runId!)).toMatchObject({ status: 'succeeded', name: 'remote__slow_job' });
    expect(remote.calls.get('slow_job')).toBe(2);
    const updates = events.flatMap((event) =>
      event.type === 'message-updated' && event.message.toolRunId === runId ? [event.message.content] : [],
    );
    expect(updates.some((content) => /step \d+ of 10/.test(content))).toBe(true);
    expect(
      events.some(
        (event) => event.type === 'tool-progress' && event.runId === runId && /step \d+ of 10/.test(event.note ?? ''),
      ),
    ).toBe(true);
    assertRequestsValid(stub, app.application.deps.settings.budget);
  });

  it('a cancel reaches the server as a task cancel, and the model is told', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'long job');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(async () => (await row(runId)).taskId !== null, {
      timeoutMs: 15_000,
      what: 'the task id on the run',
    });
    const { taskId } = await row(runId);
    expect((await app.api(`/api/tool-runs/${runId}/cancel`, { method: 'POST', token: helpers.token })).status).toBe(
      202,
    );
    await waitFor(() => remote.cancelled.has(taskId!), {
      timeoutMs: 15_000,
      what: 'the server to see the task cancel',
    });
    expect((await remote.taskStatus(taskId!))?.status).toBe('cancelled');
    await waitFor(() => reportedNote(runId) !== undefined, {
      timeoutMs: 20_000,
      what: 'the follow-up reporting the cancel',
    });
    expect(reportedNote(runId)).toMatch(/remote__slow_job \(run .*\) was cancelled:\nThe user cancelled the run\./);
    expect((await row(runId)).remoteCancelledAt).not.toBeNull();
  });

  it("reports a task that failed on the server as the tool's error", async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'failing job');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(() => reportedNote(runId) !== undefined, {
      timeoutMs: 30_000,
      what: 'the follow-up reporting the failure',
    });
    expect(reportedNote(runId)).toMatch(
      /remote__slow_job \(run .*\) failed:\njob gamma failed: the disk is full \(ID-9\)/,
    );
    expect(await getRun(runId)).toMatchObject({ status: 'failed' });
  });

  it('times a task out from the deadline stored in Postgres, and cancels it on the server', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'short deadline');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(() => reportedNote(runId) !== undefined, {
      timeoutMs: 30_000,
      what: 'the follow-up reporting the timeout',
    });
    expect(reportedNote(runId)).toMatch(
      /hurried__slow_job \(run .*\) timed out:\nhurried__slow_job did not finish within 2000 ms and was stopped\./,
    );
    const { taskId } = await row(runId);
    expect(remote.cancelled.has(taskId!)).toBe(true);
  });

  it("a forget cancels the thread's MCP task on the server", async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'long job');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(async () => (await row(runId)).taskId !== null, {
      timeoutMs: 15_000,
      what: 'the task id on the run',
    });
    const { taskId } = await row(runId);
    const forget = await app.api(`/api/threads/${thread.id}/messages/${result.userMessage.id}`, {
      method: 'DELETE',
      token: helpers.token,
    });
    expect(forget.status).toBeLessThan(300);
    await waitFor(() => remote.cancelled.has(taskId!), {
      timeoutMs: 30_000,
      what: 'the server to see the task cancel',
    });
    expect((await row(runId)).status).toBe('cancelled');
  });
});
