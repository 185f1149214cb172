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
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  assertRequestsValid,
  classifyRequest,
  lastMessage,
  responder,
  testTools,
  threadHelpers,
  isServerNote,
  serverNotesOf,
  type ThreadHelpers,
} from './tool-test-kit';

const FOLLOW_UP_REPLY = 'Here is what the background work found.';
let slowAnswerMs = 0;

/** A follow-up request ends with the server's notes (system messages) instead of a user or tool message. */
const isFollowUp = (request: StubRequest) => request.kind === 'chat' && isServerNote(lastMessage(request));
const notesOf = serverNotesOf;

function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (isServerNote(last)) return replyWithText(FOLLOW_UP_REPLY);
  if (last?.role === 'tool')
    return replyWithText('It is running; I will tell you when it is done.', { firstByteDelayMs: slowAnswerMs });
  const user = lastUserText(request.body);
  if (user === 'analyze') return replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 250 } }]);
  if (user === 'two at once')
    return replyWithToolCalls([
      { name: 'analyze_thread', arguments: { pace_ms: 20 } },
      { name: 'analyze_thread', arguments: { pace_ms: 40 } },
    ]);
  if (user === 'break things')
    return replyWithToolCalls([
      { name: 'slow_async', arguments: {} },
      { name: 'broken_async', arguments: {} },
    ]);
  if (user === 'long analysis') return replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 5000 } }]);
  if (user === 'big background report') return replyWithToolCalls([{ name: 'big_async_report', arguments: {} }]);
  return replyWithText(`plain answer to ${user} ORD-7 ID-42`);
}

describe('async tools', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;
  let budget: number;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: responder(chat) });
    // A small inline size, so even the analysis report is condensed by the summary model.
    app = await startTestApp({
      env: { OPENAI_BASE_URL: stub.url, TOOL_RESULT_INLINE_TOKENS: '60' },
      tuning: { extraTools: testTools(), toolCancelPollMs: 100 },
    });
    helpers = await threadHelpers(app);
    budget = app.application.deps.settings.budget;
  });
  beforeEach(() => {
    stub.reset();
    slowAnswerMs = 0;
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  const getRun = async (runId: string, token = helpers.token) => app.api(`/api/tool-runs/${runId}`, { token });
  const followUpTurns = (threadId: string) =>
    app.application.db.turn.findMany({ where: { threadId, kind: 'follow-up' }, orderBy: { createdAt: 'asc' } });
  const runIdOf = (content: string | undefined) => /as run ([0-9a-f-]{36})/.exec(content ?? '')?.[1] ?? '';

  it('answers the call at once, streams progress into the transcript, and delivers the condensed result in one follow-up turn', async () => {
    const thread = await helpers.newThread();
    const events = helpers.record(thread.id);
    await helpers.send(thread.id, 'hello there, ORD-7 matters');
    const result = await helpers.send(thread.id, 'analyze');
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'tool', 'assistant']);
    const runId = runIdOf(result.messages[1]?.content);
    expect(runId).not.toBe('');
    expect(result.messages[2]?.content).toBe('It is running; I will tell you when it is done.');

    // Progress appears in the transcript while the run works (its message has no seq until the result lands).
    await waitFor(
      async () =>
        (await helpers.messages(thread.id)).some(
          (message) =>
            message.toolRunId === runId && message.status === 'streaming' && /\[\d+%\]/.test(message.content),
        ),
      { timeoutMs: 15_000, what: 'progress in the transcript' },
    );

    await waitFor(() => stub.requests.some(isFollowUp), { timeoutMs: 20_000, what: 'the follow-up request' });
    await waitFor(async () => (await followUpTurns(thread.id)).every((turn) => turn.status === 'complete'), {
      timeoutMs: 10_000,
      what: 'the follow-up turn',
    });

    const run = (await (await getRun(runId)).json()) as ToolRunDto;
    expect(run).toMatchObject({
      id: runId,
      name: 'analyze_thread',
      status: 'succeeded',
      progress: 1,
      args: { pace_ms: 250 },
    });
    expect(run.resultPreview).toContain('Thread analysis');

    // The transcript keeps the full result, at a seq after the turn that started it.
    const transcript = await helpers.messages(thread.id);
    const note = transcript.find((message) => message.toolRunId === runId && message.role === 'system');
    expect(note?.status).toBe('complete');
    expect(note?.seq).toBeGreaterThan(result.messages[2]?.seq ?? Infinity);
    expect(note?.content).toContain(
      `Result of analyze_thread (run ${runId}, started at seq ${result.messages[0]?.seq}):`,
    );
    expect(note?.content).toContain('- Messages: ');
    expect(note?.content).toContain('ORD-7');

    // Exactly one follow-up, which saw the condensed result with its handle, not the full text.
    expect(await followUpTurns(thread.id)).toHaveLength(1);
    const followUps = stub.requests.filter(isFollowUp);
    expect(followUps).toHaveLength(1);
    const [seen] = notesOf(followUps[0]!);
    expect(seen).toContain(`Result of analyze_thread (run ${runId}`);
    expect(seen).toContain('CONDENSED: ORD-7');
    expect(seen).toContain(`read_tool_result(handle="${runId}"`);
    expect(seen).not.toContain('- Messages: ');
    expect(transcript.at(-1)?.content).toBe(FOLLOW_UP_REPLY);

    // Events: tool-start, progress, tool-end for the run.
    const types = events
      .filter((event) => ('runId' in event && event.runId === runId) || ('run' in event && event.run.id === runId))
      .map((event) => event.type);
    expect(types[0]).toBe('tool-start');
    expect(types.filter((type) => type === 'tool-progress').length).toBeGreaterThanOrEqual(4);
    expect(types.at(-1)).toBe('tool-end');
    const end = events.find((event) => event.type === 'tool-end');
    expect(end?.type === 'tool-end' && end.run.status).toBe('succeeded');

    // Only the owner sees the run.
    const stranger = await app.guest();
    expect((await getRun(runId, stranger.token)).status).toBe(404);
    assertRequestsValid(stub, budget);
  });

  it('delivers two results that land during a user turn in one follow-up after it', async () => {
    const thread = await helpers.newThread();
    // The answer after the tool messages takes 4 s: both runs finish while this turn still runs.
    slowAnswerMs = 4000;
    const result = await helpers.send(thread.id, 'two at once');
    const turnEnded = Date.now();
    const runIds = result.messages
      .filter((message) => message.role === 'tool')
      .map((message) => runIdOf(message.content));
    expect(runIds).toHaveLength(2);
    const runs = await app.application.db.toolRun.findMany({ where: { id: { in: runIds } } });
    expect(runs.every((run) => run.reportedAt !== null && run.reportedAt.getTime() < turnEnded)).toBe(true);

    await waitFor(
      async () => {
        const turns = await followUpTurns(thread.id);
        return turns.length > 0 && turns.every((turn) => turn.status === 'complete');
      },
      { timeoutMs: 15_000, what: 'the follow-up turn' },
    );
    const turns = await followUpTurns(thread.id);
    expect(turns).toHaveLength(1);
    const userTurn = await app.application.db.turn.findUniqueOrThrow({ where: { id: result.turn.id } });
    expect(turns[0]!.startedAt!.getTime()).toBeGreaterThanOrEqual(userTurn.finishedAt!.getTime());
    const followUps = stub.requests.filter(isFollowUp);
    expect(followUps).toHaveLength(1);
    const notes = notesOf(followUps[0]!);
    for (const runId of runIds) expect(notes.some((note) => note.includes(`(run ${runId},`))).toBe(true);
    assertRequestsValid(stub, budget);
  });

  it('reports a timed-out and a failing run to the model with the reason', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'break things');
    const [slowId, brokenId] = result.messages
      .filter((message) => message.role === 'tool')
      .map((message) => runIdOf(message.content));
    await waitFor(
      async () => {
        const turns = await followUpTurns(thread.id);
        const runs = await app.application.db.toolRun.findMany({ where: { threadId: thread.id } });
        return (
          runs.every((run) => run.reportedAt) && turns.length > 0 && turns.every((turn) => turn.status === 'complete')
        );
      },
      { timeoutMs: 20_000, what: 'both runs reported and followed up' },
    );
    // The follow-up requests are what the model saw: wait until both results reached it (one or two follow-ups).
    const followUpNotes = () => stub.requests.filter(isFollowUp).flatMap(notesOf);
    await waitFor(() => [slowId!, brokenId!].every((id) => followUpNotes().some((note) => note.includes(id))), {
      timeoutMs: 20_000,
      what: 'both results in follow-up requests',
    });
    const notes = followUpNotes();
    expect(notes.find((note) => note.includes(slowId!))).toMatch(
      /^slow_async \(run .*\) timed out:\nslow_async did not finish within 400 ms and was stopped\./,
    );
    expect(notes.find((note) => note.includes(brokenId!))).toMatch(
      /^broken_async \(run .*\) failed:\nbroken_async failed: the archive is corrupt \(ID-77\)/,
    );
    expect(((await (await getRun(slowId!)).json()) as ToolRunDto).status).toBe('timed_out');
    expect((await (await getRun(brokenId!)).json()) as ToolRunDto).toMatchObject({
      status: 'failed',
      error: 'broken_async failed: the archive is corrupt (ID-77)',
    });
    assertRequestsValid(stub, budget);
  });

  it('cancels a running tool from the API and tells the model', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'long analysis');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(async () => ((await (await getRun(runId)).json()) as ToolRunDto).status === 'running', {
      timeoutMs: 10_000,
      what: 'the run to start',
    });
    const stranger = await app.guest();
    expect((await app.api(`/api/tool-runs/${runId}/cancel`, { method: 'POST', token: stranger.token })).status).toBe(
      404,
    );
    const cancel = await app.api(`/api/tool-runs/${runId}/cancel`, { method: 'POST', token: helpers.token });
    expect(cancel.status).toBe(202);
    await waitFor(async () => ((await (await getRun(runId)).json()) as ToolRunDto).status === 'cancelled', {
      timeoutMs: 10_000,
      what: 'the cancel to land',
    });
    const reported = () =>
      stub.requests.filter(isFollowUp).find((request) => notesOf(request).some((note) => note.includes(runId)));
    await waitFor(() => reported() !== undefined, { timeoutMs: 10_000, what: 'the follow-up reporting the cancel' });
    expect(notesOf(reported()!).join('\n')).toContain(
      `analyze_thread (run ${runId}, started at seq 2) was cancelled:\nThe user cancelled the run.`,
    );
    expect((await app.api(`/api/tool-runs/${runId}/cancel`, { method: 'POST', token: helpers.token })).status).toBe(
      409,
    );
    assertRequestsValid(stub, budget);
  });
});
