import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ToolRunDto } from '../../src/shared/api';
import { lastUserText, replyWithText, replyWithToolCalls, startOpenAIStub, type OpenAIStub, type StubRequest } from '../support/openai-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { classifyRequest, lastMessage, responder, threadHelpers, isServerNote, serverNotesOf, type ThreadHelpers } from './tool-test-kit';

const SECRET = 'runner-secret-0123456789abcdef-0123456789';
const runIdOf = (content: string | undefined) => /as run ([0-9a-f-]{36})/.exec(content ?? '')?.[1] ?? '';
const isFollowUp = (request: StubRequest) => request.kind === 'chat' && isServerNote(lastMessage(request));
const notesOf = serverNotesOf;

/** Signs as a runner would, independently of the server's code: HMAC-SHA256 of `<timestamp>.<body>`. */
function sign(body: string, timestamp = Date.now(), secret = SECRET) {
  return { 'content-type': 'application/json', 'x-tool-timestamp': String(timestamp), 'x-tool-signature': `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}` };
}

interface RunnerRequest { path: string; body: string; payload: Record<string, unknown>; validSignature: boolean }

function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (isServerNote(last)) return replyWithText('The render has ended.');
  if (last?.role === 'tool') return replyWithText('Rendering in the background.');
  const user = lastUserText(request.body);
  if (user === 'render') return replyWithToolCalls([{ name: 'render_video', arguments: { scene: 'sunset', seconds: 12 } }]);
  if (user === 'quick render') return replyWithToolCalls([{ name: 'quick_render', arguments: { scene: 'dawn' } }]);
  return replyWithText('noted');
}

describe('external runners: signed run requests and callbacks', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;
  let runner: Server;
  let runnerUrl: string;
  const received: RunnerRequest[] = [];

  beforeAll(async () => {
    runner = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const timestamp = Number(request.headers['x-tool-timestamp']);
        const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex')}`;
        received.push({ path: request.url ?? '', body, payload: JSON.parse(body) as Record<string, unknown>, validSignature: request.headers['x-tool-signature'] === expected && Math.abs(Date.now() - timestamp) < 60_000 });
        response.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => runner.listen(0, '127.0.0.1', () => resolve()));
    const address = runner.address();
    runnerUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    stub = await startOpenAIStub({ classifyRequest, responder: responder(chat) });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        TOOL_WEBHOOK_SECRET: SECRET,
        PUBLIC_BASE_URL: 'https://chat.example.com/',
        EXTERNAL_TOOLS: JSON.stringify([
          { name: 'render_video', description: 'Renders a video scene.', mode: 'external', url: `${runnerUrl}/run`, parameters: { type: 'object', properties: { scene: { type: 'string' }, seconds: { type: 'number' } }, required: ['scene'] } },
          { name: 'quick_render', description: 'Renders fast or not at all.', mode: 'external', url: `${runnerUrl}/quick`, timeoutMs: 1500 },
        ]),
      },
    });
    helpers = await threadHelpers(app);
  });
  beforeEach(() => stub.reset());
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
    await new Promise<void>((resolve) => runner?.close(() => resolve()));
  });

  const callback = (runId: string, kind: 'progress' | 'result', payload: unknown, headers?: Record<string, string>) => {
    const body = JSON.stringify(payload);
    return app.api(`/api/tool-runs/${runId}/${kind}`, { method: 'POST', body, headers: headers ?? sign(body) });
  };
  const getRun = async (runId: string) => (await (await app.api(`/api/tool-runs/${runId}`, { token: helpers.token })).json()) as ToolRunDto;
  const reportedNote = (runId: string) => stub.requests.filter(isFollowUp).flatMap(notesOf).find((note) => note.includes(`(run ${runId},`));

  it('POSTs the signed run request, takes signed progress and result callbacks, and delivers the result in a follow-up', async () => {
    const thread = await helpers.newThread();
    const events = helpers.record(thread.id);
    const result = await helpers.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(() => received.some((request) => request.payload.runId === runId), { timeoutMs: 15_000, what: 'the run request at the runner' });
    const request = received.find((candidate) => candidate.payload.runId === runId)!;
    expect(request).toMatchObject({ path: '/run', validSignature: true });
    expect(request.payload).toEqual({ runId, tool: 'render_video', args: { scene: 'sunset', seconds: 12 }, threadId: thread.id, callbackUrl: `https://chat.example.com/api/tool-runs/${runId}` });
    await waitFor(async () => (await app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } })).taskId === runId, { timeoutMs: 10_000, what: 'the run handed over' });

    expect((await callback(runId, 'progress', { progress: 0.4, note: 'frames 1-40' })).status).toBe(202);
    expect(events.some((event) => event.type === 'tool-progress' && event.runId === runId && event.progress === 0.4 && event.note === 'frames 1-40')).toBe(true);
    expect((await helpers.messages(thread.id)).find((message) => message.toolRunId === runId)?.content).toContain('[40%] frames 1-40');

    const done = await callback(runId, 'result', { status: 'succeeded', result: 'Rendered sunset.mp4 (12 s, 1080p), ORD-5' });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ ok: true, duplicate: false, status: 'succeeded' });
    // The runner retries its result: ignored, and reported once.
    const again = await callback(runId, 'result', { status: 'succeeded', result: 'Rendered sunset.mp4 (12 s, 1080p), ORD-5' });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });

    await waitFor(() => reportedNote(runId) !== undefined, { timeoutMs: 20_000, what: 'the follow-up' });
    expect(reportedNote(runId)).toContain('Rendered sunset.mp4 (12 s, 1080p), ORD-5');
    expect(await getRun(runId)).toMatchObject({ status: 'succeeded' });
    expect(await app.application.db.turn.count({ where: { threadId: thread.id, kind: 'follow-up' } })).toBe(1);
  });

  it('refuses forged, stale and replayed callbacks', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(async () => (await app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } })).taskId === runId, { timeoutMs: 15_000, what: 'the run handed over' });
    const payload = { status: 'succeeded', result: 'forged result' };
    const body = JSON.stringify(payload);
    const forged = await callback(runId, 'result', payload, sign(body, Date.now(), 'some-other-secret-0123456789-0123456789'));
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    // The signature of one body does not cover another.
    expect((await callback(runId, 'result', { status: 'succeeded', result: 'tampered' }, sign(body))).status).toBe(401);
    expect((await callback(runId, 'result', payload, sign(body, Date.now() - 10 * 60_000))).status).toBe(401);
    expect((await app.api(`/api/tool-runs/${runId}/result`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).status).toBe(401);

    const progressBody = JSON.stringify({ progress: 0.5 });
    const headers = sign(progressBody);
    expect((await app.api(`/api/tool-runs/${runId}/progress`, { method: 'POST', body: progressBody, headers })).status).toBe(202);
    const replayed = await app.api(`/api/tool-runs/${runId}/progress`, { method: 'POST', body: progressBody, headers });
    expect(replayed.status).toBe(401);
    expect(((await replayed.json()) as { error: { message: string } }).error.message).toMatch(/replay/);
    expect(await getRun(runId)).toMatchObject({ status: 'running', resultPreview: null });
  });

  it('POSTs a cancel to the runner, and refuses its late result with 409', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(async () => (await app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } })).taskId === runId, { timeoutMs: 15_000, what: 'the run handed over' });
    expect((await app.api(`/api/tool-runs/${runId}/cancel`, { method: 'POST', token: helpers.token })).status).toBe(202);
    await waitFor(() => received.some((request) => request.path === '/run/cancel' && request.payload.runId === runId), { timeoutMs: 15_000, what: 'the cancel at the runner' });
    expect(received.find((request) => request.path === '/run/cancel' && request.payload.runId === runId)?.validSignature).toBe(true);
    await waitFor(async () => (await getRun(runId)).status === 'cancelled', { timeoutMs: 10_000, what: 'the run cancelled' });
    const late = await callback(runId, 'result', { status: 'succeeded', result: 'too late' });
    expect(late.status).toBe(409);
    expect((await callback(runId, 'progress', { progress: 0.9 })).status).toBe(409);
  });

  it('times a run out from its deadline and refuses a result after it with 409', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'quick render');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(() => reportedNote(runId) !== undefined, { timeoutMs: 30_000, what: 'the follow-up reporting the timeout' });
    expect(reportedNote(runId)).toMatch(/quick_render \(run .*\) timed out:\nquick_render did not finish within 1500 ms and was stopped\./);
    expect((await callback(runId, 'result', { status: 'succeeded', result: 'finally' })).status).toBe(409);
    await waitFor(() => received.some((request) => request.path === '/quick/cancel' && request.payload.runId === runId), { timeoutMs: 10_000, what: 'the cancel at the runner' });
  });
});
