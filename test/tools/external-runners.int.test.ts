import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
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
  classifyRequest,
  lastMessage,
  responder,
  threadHelpers,
  isServerNote,
  serverNotesOf,
  type ThreadHelpers,
} from './tool-test-kit';

const SECRET = 'runner-secret-0123456789abcdef-0123456789';
/** The own secret of the print_label runner (EXTERNAL_TOOLS `secret`): only it signs for that runner's runs. */
const PRINTER_SECRET = 'printer-secret-9876543210fedcba-9876543210';
const runIdOf = (content: string | undefined) => /as run ([0-9a-f-]{36})/.exec(content ?? '')?.[1] ?? '';
const isFollowUp = (request: StubRequest) => request.kind === 'chat' && isServerNote(lastMessage(request));
const notesOf = serverNotesOf;

/** Runner protocol v2, computed independently of the server's code: `v2=` + HMAC-SHA256 of the request's parts. */
function signature(input: { secret: string; timestamp: number; path: string; runId: string; body: string }): string {
  return `v2=${createHmac('sha256', input.secret).update(`v2\n${input.timestamp}\nPOST\n${input.path}\n${input.runId}\n${input.body}`).digest('hex')}`;
}

/** Signs a callback as a runner would: for `path` (`/api/tool-runs/<runId>/<kind>`) and that run. */
function sign(body: string, options: { path: string; runId: string; timestamp?: number; secret?: string }) {
  const timestamp = options.timestamp ?? Date.now();
  return {
    'content-type': 'application/json',
    'x-tool-timestamp': String(timestamp),
    'x-tool-signature': signature({
      secret: options.secret ?? SECRET,
      timestamp,
      path: options.path,
      runId: options.runId,
      body,
    }),
  };
}

/** A protocol-v1 signature (timestamp and body only), as a runner written for the old protocol sends it. */
function signV1(body: string, timestamp = Date.now()) {
  return {
    'content-type': 'application/json',
    'x-tool-timestamp': String(timestamp),
    'x-tool-signature': `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex')}`,
  };
}

interface RunnerRequest {
  path: string;
  body: string;
  payload: Record<string, unknown>;
  validSignature: boolean;
  idempotencyKey: string | undefined;
}

function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (isServerNote(last)) return replyWithText('The render has ended.');
  if (last?.role === 'tool') return replyWithText('Rendering in the background.');
  const user = lastUserText(request.body);
  if (user === 'render')
    return replyWithToolCalls([{ name: 'render_video', arguments: { scene: 'sunset', seconds: 12 } }]);
  if (user === 'quick render') return replyWithToolCalls([{ name: 'quick_render', arguments: { scene: 'dawn' } }]);
  if (user === 'early render') return replyWithToolCalls([{ name: 'early_render', arguments: { scene: 'noon' } }]);
  if (user === 'print') return replyWithToolCalls([{ name: 'print_label', arguments: { text: 'ORD-7' } }]);
  if (user === 'moved render') return replyWithToolCalls([{ name: 'moved_render', arguments: { scene: 'dusk' } }]);
  return replyWithText('noted');
}

describe('external runners: signed run requests and callbacks', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;
  let runner: Server;
  let runnerUrl: string;
  const received: RunnerRequest[] = [];
  /** What the early runner's result callback was answered, sent before it answered the run request. */
  const earlyAnswers: number[] = [];

  beforeAll(async () => {
    runner = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const timestamp = Number(request.headers['x-tool-timestamp']);
        const payload = JSON.parse(body) as Record<string, unknown>;
        const path = request.url ?? '';
        const expected = signature({
          secret: path.startsWith('/print') ? PRINTER_SECRET : SECRET,
          timestamp,
          path,
          runId: String(payload.runId),
          body,
        });
        received.push({
          path,
          body,
          payload,
          validSignature: request.headers['x-tool-signature'] === expected && Math.abs(Date.now() - timestamp) < 60_000,
          idempotencyKey: request.headers['idempotency-key'] as string | undefined,
        });
        // A redirect must not be followed with the signed body.
        if (path === '/moved') return void response.writeHead(307, { location: `${runnerUrl}/elsewhere` }).end();
        // A fast runner: its result is posted (and answered) before it answers the run request itself.
        if (path === '/early') {
          const runId = String(payload.runId);
          const result = JSON.stringify({ status: 'succeeded', result: 'Rendered noon.mp4 before saying so' });
          void app
            .api(`/api/tool-runs/${runId}/result`, {
              method: 'POST',
              body: result,
              headers: sign(result, { path: `/api/tool-runs/${runId}/result`, runId }),
            })
            .then((answer) => {
              earlyAnswers.push(answer.status);
              response.writeHead(202).end();
            });
          return;
        }
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
          {
            name: 'render_video',
            description: 'Renders a video scene.',
            mode: 'external',
            url: `${runnerUrl}/run`,
            parameters: {
              type: 'object',
              properties: { scene: { type: 'string' }, seconds: { type: 'number' } },
              required: ['scene'],
            },
          },
          {
            name: 'quick_render',
            description: 'Renders fast or not at all.',
            mode: 'external',
            url: `${runnerUrl}/quick`,
            timeoutMs: 1500,
          },
          {
            name: 'early_render',
            description: 'Renders before it says it started.',
            mode: 'external',
            url: `${runnerUrl}/early`,
          },
          {
            name: 'print_label',
            description: 'Prints a label.',
            mode: 'external',
            url: `${runnerUrl}/print`,
            secret: '${PRINTER_RUNNER_SECRET}',
          },
          { name: 'moved_render', description: 'A runner that moved.', mode: 'external', url: `${runnerUrl}/moved` },
        ]),
        PRINTER_RUNNER_SECRET: PRINTER_SECRET,
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

  const callbackPath = (runId: string, kind: 'progress' | 'result') => `/api/tool-runs/${runId}/${kind}`;
  const callback = (runId: string, kind: 'progress' | 'result', payload: unknown, headers?: Record<string, string>) => {
    const body = JSON.stringify(payload);
    return app.api(callbackPath(runId, kind), {
      method: 'POST',
      body,
      headers: headers ?? sign(body, { path: callbackPath(runId, kind), runId }),
    });
  };
  const handedOver = (runId: string) =>
    waitFor(
      async () => (await app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } })).handedAt !== null,
      { timeoutMs: 15_000, what: 'the run handed over' },
    );
  const getRun = async (runId: string) =>
    (await (await app.api(`/api/tool-runs/${runId}`, { token: helpers.token })).json()) as ToolRunDto;
  const reportedNote = (runId: string) =>
    stub.requests
      .filter(isFollowUp)
      .flatMap(notesOf)
      .find((note) => note.includes(`(run ${runId},`));

  it('POSTs the signed run request, takes signed progress and result callbacks, and delivers the result in a follow-up', async () => {
    const thread = await helpers.newThread();
    const events = helpers.record(thread.id);
    const result = await helpers.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(() => received.some((request) => request.payload.runId === runId), {
      timeoutMs: 15_000,
      what: 'the run request at the runner',
    });
    const request = received.find((candidate) => candidate.payload.runId === runId)!;
    expect(request).toMatchObject({ path: '/run', validSignature: true, idempotencyKey: runId });
    expect(request.payload).toEqual({
      runId,
      idempotencyKey: runId,
      tool: 'render_video',
      args: { scene: 'sunset', seconds: 12 },
      threadId: thread.id,
      callbackUrl: `https://chat.example.com/api/tool-runs/${runId}`,
    });
    await handedOver(runId);

    expect((await callback(runId, 'progress', { progress: 0.4, note: 'frames 1-40' })).status).toBe(202);
    expect(
      events.some(
        (event) =>
          event.type === 'tool-progress' &&
          event.runId === runId &&
          event.progress === 0.4 &&
          event.note === 'frames 1-40',
      ),
    ).toBe(true);
    expect((await helpers.messages(thread.id)).find((message) => message.toolRunId === runId)?.content).toContain(
      '[40%] frames 1-40',
    );

    const done = await callback(runId, 'result', {
      status: 'succeeded',
      result: 'Rendered sunset.mp4 (12 s, 1080p), ORD-5',
    });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ ok: true, duplicate: false, status: 'succeeded' });
    // The runner retries its result: ignored, and reported once.
    const again = await callback(runId, 'result', {
      status: 'succeeded',
      result: 'Rendered sunset.mp4 (12 s, 1080p), ORD-5',
    });
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
    await handedOver(runId);
    const payload = { status: 'succeeded', result: 'forged result' };
    const body = JSON.stringify(payload);
    const path = callbackPath(runId, 'result');
    const forged = await callback(
      runId,
      'result',
      payload,
      sign(body, { path, runId, secret: 'some-other-secret-0123456789-0123456789' }),
    );
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    // The signature of one body does not cover another.
    expect(
      (await callback(runId, 'result', { status: 'succeeded', result: 'tampered' }, sign(body, { path, runId })))
        .status,
    ).toBe(401);
    expect(
      (await callback(runId, 'result', payload, sign(body, { path, runId, timestamp: Date.now() - 10 * 60_000 })))
        .status,
    ).toBe(401);
    expect(
      (await app.api(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).status,
    ).toBe(401);
    // Signed for the progress route, or for another run, it does not verify on this one's result route.
    expect(
      (await callback(runId, 'result', payload, sign(body, { path: callbackPath(runId, 'progress'), runId }))).status,
    ).toBe(401);

    const progressBody = JSON.stringify({ progress: 0.5 });
    const headers = sign(progressBody, { path: callbackPath(runId, 'progress'), runId });
    expect(
      (await app.api(`/api/tool-runs/${runId}/progress`, { method: 'POST', body: progressBody, headers })).status,
    ).toBe(202);
    const replayed = await app.api(`/api/tool-runs/${runId}/progress`, { method: 'POST', body: progressBody, headers });
    expect(replayed.status).toBe(401);
    expect(((await replayed.json()) as { error: { message: string } }).error.message).toMatch(/replay/);
    expect(await getRun(runId)).toMatchObject({ status: 'running', resultPreview: null });
  });

  it('POSTs a cancel to the runner, and refuses its late result with 409', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await handedOver(runId);
    expect((await app.api(`/api/tool-runs/${runId}/cancel`, { method: 'POST', token: helpers.token })).status).toBe(
      202,
    );
    await waitFor(() => received.some((request) => request.path === '/run/cancel' && request.payload.runId === runId), {
      timeoutMs: 15_000,
      what: 'the cancel at the runner',
    });
    expect(
      received.find((request) => request.path === '/run/cancel' && request.payload.runId === runId)?.validSignature,
    ).toBe(true);
    await waitFor(async () => (await getRun(runId)).status === 'cancelled', {
      timeoutMs: 10_000,
      what: 'the run cancelled',
    });
    const late = await callback(runId, 'result', { status: 'succeeded', result: 'too late' });
    expect(late.status).toBe(409);
    expect((await callback(runId, 'progress', { progress: 0.9 })).status).toBe(409);
  });

  it('erasing the user (DELETE /api/me) sends the cancel of their running work to the runner before their runs go; a late result is refused', async () => {
    const own = await threadHelpers(app);
    const thread = await own.newThread();
    const result = await own.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await handedOver(runId);
    expect(received.some((request) => request.path === '/run/cancel' && request.payload.runId === runId)).toBe(false);
    expect((await app.api('/api/me', { method: 'DELETE', token: own.token })).status).toBe(204);
    // Sent before the 204: once the rows are gone, nothing could say what to cancel.
    const cancel = received.find((request) => request.path === '/run/cancel' && request.payload.runId === runId);
    expect(cancel?.validSignature).toBe(true);
    expect(await app.application.db.toolRun.findUnique({ where: { id: runId } })).toBeNull();
    // An unknown run: no runner's secret can vouch for the callback.
    expect((await callback(runId, 'result', { status: 'succeeded', result: 'too late' })).status).toBe(401);
  });

  it('deleting the thread (DELETE /api/threads/:id) sends the cancel of its running work to the runner before its runs go', async () => {
    const own = await threadHelpers(app);
    const thread = await own.newThread();
    const result = await own.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await handedOver(runId);
    expect(received.some((request) => request.path === '/run/cancel' && request.payload.runId === runId)).toBe(false);
    expect((await app.api(`/api/threads/${thread.id}`, { method: 'DELETE', token: own.token })).status).toBe(204);
    // Sent before the 204: once the rows are gone, nothing could say what to cancel.
    const cancel = received.find((request) => request.path === '/run/cancel' && request.payload.runId === runId);
    expect(cancel?.validSignature).toBe(true);
    expect(await app.application.db.toolRun.findUnique({ where: { id: runId } })).toBeNull();
  });

  it('times a run out from its deadline and refuses a result after it with 409', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'quick render');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(() => reportedNote(runId) !== undefined, {
      timeoutMs: 30_000,
      what: 'the follow-up reporting the timeout',
    });
    expect(reportedNote(runId)).toMatch(
      /quick_render \(run .*\) timed out:\nquick_render did not finish within 1500 ms and was stopped\./,
    );
    expect((await callback(runId, 'result', { status: 'succeeded', result: 'finally' })).status).toBe(409);
    await waitFor(
      () => received.some((request) => request.path === '/quick/cancel' && request.payload.runId === runId),
      { timeoutMs: 10_000, what: 'the cancel at the runner' },
    );
  });
  it('accepts a result that arrives before the run request was answered (its task id and deadline are stored first)', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'early render');
    const runId = runIdOf(result.messages[1]?.content);
    await waitFor(() => earlyAnswers.length > 0, { timeoutMs: 15_000, what: "the early runner's result answered" });
    expect(earlyAnswers).toEqual([200]);
    await waitFor(() => reportedNote(runId) !== undefined, { timeoutMs: 20_000, what: 'the follow-up' });
    expect(reportedNote(runId)).toContain('Rendered noon.mp4 before saying so');
    expect(await getRun(runId)).toMatchObject({ status: 'succeeded' });
    // Sent once: the run was never posted again.
    expect(received.filter((request) => request.path === '/early' && request.payload.runId === runId)).toHaveLength(1);
  });

  it('counts a signature as used only once its report is accepted: a refused report can be sent again', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await handedOver(runId);
    // Longer than TOOL_RESULT_MAX_CHARS (this app's 2,000,000 default): 400, and the same signed bytes again are
    // refused for the same reason, not as a replay.
    const tooLong = JSON.stringify({ status: 'succeeded', result: 'x'.repeat(2_000_001) });
    const headers = sign(tooLong, { path: callbackPath(runId, 'result'), runId });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refused = await app.api(callbackPath(runId, 'result'), { method: 'POST', body: tooLong, headers });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('VALIDATION');
    }
    // A 1 MB result (five times the /api body limit) is taken whole.
    const large = `${'All frames rendered. '.repeat(50_000)}ORD-1MB`;
    expect(large.length).toBeGreaterThan(1_000_000);
    const done = await callback(runId, 'result', { status: 'succeeded', result: large });
    expect(done.status).toBe(200);
    await waitFor(
      async () => (await app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } })).result === large,
      { timeoutMs: 10_000, what: 'the large result stored' },
    );
  });

  it("takes a runner's reports only with its own secret: one runner cannot report into another's runs", async () => {
    const thread = await helpers.newThread();
    const printed = await helpers.send(thread.id, 'print');
    const printRun = runIdOf(printed.messages[1]?.content);
    await handedOver(printRun);
    // The print runner's request is signed with its own secret (the runner checks it).
    expect(
      received.find((request) => request.path === '/print' && request.payload.runId === printRun)?.validSignature,
    ).toBe(true);
    const rendered = await helpers.send(thread.id, 'render');
    const renderRun = runIdOf(rendered.messages[1]?.content);
    await handedOver(renderRun);

    const body = JSON.stringify({ status: 'succeeded', result: 'Printed ORD-7' });
    // The shared secret (another runner's) does not sign for the print runner's run, nor its secret for another run.
    const shared = await app.api(callbackPath(printRun, 'result'), {
      method: 'POST',
      body,
      headers: sign(body, { path: callbackPath(printRun, 'result'), runId: printRun, secret: SECRET }),
    });
    expect(shared.status).toBe(401);
    const stray = JSON.stringify({ status: 'succeeded', result: 'Printed into the wrong thread' });
    const intoRender = await app.api(callbackPath(renderRun, 'result'), {
      method: 'POST',
      body: stray,
      headers: sign(stray, { path: callbackPath(renderRun, 'result'), runId: renderRun, secret: PRINTER_SECRET }),
    });
    expect(intoRender.status).toBe(401);
    const own = await app.api(callbackPath(printRun, 'result'), {
      method: 'POST',
      body,
      headers: sign(body, { path: callbackPath(printRun, 'result'), runId: printRun, secret: PRINTER_SECRET }),
    });
    expect(own.status).toBe(200);
    expect(await getRun(renderRun)).toMatchObject({ status: 'running', resultPreview: null });
  });

  it('refuses a protocol-v1 signature with a message that names the change, and treats a redirect of the run request as a failure', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await handedOver(runId);
    const body = JSON.stringify({ progress: 0.3 });
    const legacy = await app.api(callbackPath(runId, 'progress'), { method: 'POST', body, headers: signV1(body) });
    expect(legacy.status).toBe(401);
    expect(((await legacy.json()) as { error: { message: string } }).error.message).toMatch(
      /protocol v1 signature \(sha256=\) is no longer accepted; sign with protocol v2/,
    );

    const moved = await helpers.send(thread.id, 'moved render');
    const movedRun = runIdOf(moved.messages[1]?.content);
    await waitFor(async () => (await getRun(movedRun)).status === 'failed', {
      timeoutMs: 20_000,
      what: 'the redirected run failed',
    });
    // The user and the model see a generic error with a reference, never the runner's address (it is in the log).
    const stored = await app.application.db.toolRun.findUniqueOrThrow({ where: { id: movedRun } });
    expect(stored.error).toMatch(/moved_render could not be started: an internal error \(reference [0-9a-f]{8}\b/);
    const runner = new URL(runnerUrl);
    const shown = JSON.stringify([await getRun(movedRun), await helpers.messages(thread.id)]);
    for (const secret of [runner.host, `:${runner.port}`, 'redirect']) expect(shown).not.toContain(secret);
    expect(received.some((request) => request.path === '/elsewhere')).toBe(false);
  });
  it("sends the run request again with the same idempotency key when a worker died before the runner's answer was stored, and reports once", async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'render');
    const runId = runIdOf(result.messages[1]?.content);
    await handedOver(runId);
    // What a worker dying after the request (or between storing the key and sending it) leaves: the key and the
    // deadline stored, the answer not; the sweeper finds it once its last poll is stale.
    await app.application.db
      .$executeRaw`UPDATE tool_runs SET handed_at = NULL, polled_at = now() - interval '1 hour' WHERE id = ${runId}::uuid`;
    await waitFor(
      () => received.filter((request) => request.path === '/run' && request.payload.runId === runId).length === 2,
      { timeoutMs: 20_000, what: 'the run request sent again' },
    );
    const [first, again] = received.filter((request) => request.path === '/run' && request.payload.runId === runId);
    expect(again).toMatchObject({ validSignature: true, idempotencyKey: first!.idempotencyKey });
    expect(again!.payload).toEqual(first!.payload);
    await handedOver(runId);
    const stored = await app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } });
    expect(stored).toMatchObject({ status: 'running', attempts: 1, taskId: runId });

    expect((await callback(runId, 'result', { status: 'succeeded', result: 'Rendered once, ORD-2' })).status).toBe(200);
    await waitFor(() => reportedNote(runId) !== undefined, { timeoutMs: 20_000, what: 'the follow-up' });
    expect(await app.application.db.turn.count({ where: { threadId: thread.id, kind: 'follow-up' } })).toBe(1);
    expect(received.filter((request) => request.path === '/run' && request.payload.runId === runId)).toHaveLength(2);
  });
});
