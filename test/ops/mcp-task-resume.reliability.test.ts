import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
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
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import {
  assertRequestsValid,
  classifyRequest,
  lastMessage,
  responder,
  threadHelpers,
  isServerNote,
  type ThreadHelpers,
} from '../tools/tool-test-kit';

// Issue 15: an MCP task submitted by one worker process is finished by another after the first is SIGKILLed:
// the second resumes polling the same task by its id (stored in Postgres) and never calls the tool again.

function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (isServerNote(last)) return replyWithText('The remote job has ended.');
  if (last?.role === 'tool') return replyWithText('It runs on the remote server.');
  if (lastUserText(request.body) === 'remote job')
    return replyWithToolCalls([{ name: 'remote__slow_job', arguments: { label: 'kappa', steps: 12, stepMs: 500 } }]);
  return replyWithText('ok');
}

describe('an MCP task whose worker is killed', () => {
  let stub: OpenAIStub;
  let remote: McpTestServer;
  let app: TestApp;
  let helpers: ThreadHelpers;
  let dataDir: string;
  const workers: WorkerProcess[] = [];
  let mcpServers: string;

  const startWorker = async () => {
    const worker = startWorkerProcess({
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      DATABASE_URL: app.databaseUrl,
      REDIS_URL: app.redisUrl,
      REDIS_PREFIX: app.prefix,
      OPENAI_BASE_URL: stub.url,
      AUTH_SECRET: app.authSecret,
      ADMIN_TOKEN: randomBytes(16).toString('hex'),
      MCP_SERVERS: mcpServers,
      WORKER_LOCK_MS: '1500',
      WORKER_STALLED_INTERVAL_MS: '500',
      SWEEP_INTERVAL_MS: '2000',
    });
    workers.push(worker);
    await worker.ready;
    return worker;
  };

  beforeAll(async () => {
    dataDir = await makeServiceTempDir('mcp-resume-');
    stub = await startOpenAIStub({ classifyRequest, responder: responder(chat) });
    remote = await startMcpTestServer();
    mcpServers = JSON.stringify({ remote: { url: remote.url, mode: 'async' } });
    // The server process runs no workers: the task goes to the worker processes this test starts and kills.
    app = await startTestApp({ mode: 'serve', env: { OPENAI_BASE_URL: stub.url, MCP_SERVERS: mcpServers } });
    helpers = await threadHelpers(app);
  }, 120_000);
  afterAll(async () => {
    for (const worker of workers) await worker.kill('SIGTERM');
    await app?.stop();
    await remote?.close();
    await stub?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('completes on another worker by resuming the task, without calling the tool twice', async () => {
    const first = await startWorker();
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'remote job');
    const runId =
      /as run ([0-9a-f-]{36})/.exec(result.messages.find((message) => message.role === 'tool')?.content ?? '')?.[1] ??
      '';
    expect(runId).not.toBe('');
    const row = () => app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } });

    // The first worker submitted the task and polls it; the task works on the remote server.
    await waitFor(async () => (await row()).taskId !== null, {
      timeoutMs: 30_000,
      what: 'the task id stored by the first worker',
    });
    const { taskId } = await row();
    await waitFor(async () => (await remote.taskStatus(taskId!))?.status === 'working', {
      timeoutMs: 10_000,
      what: 'the task to work',
    });
    await first.kill('SIGKILL');

    await startWorker();
    await waitFor(
      async () => {
        const turns = await app.application.db.turn.findMany({ where: { threadId: thread.id, kind: 'follow-up' } });
        return turns.length > 0 && turns.every((turn) => turn.status === 'complete');
      },
      { timeoutMs: 90_000, what: 'the follow-up after the resumed task' },
    );

    const run = await row();
    expect(run).toMatchObject({ status: 'succeeded', taskId });
    expect(run.reportedAt).not.toBeNull();
    // One call of the tool on the server, one task: the second worker polled the first one's task.
    expect(remote.calls.get('slow_job')).toBe(1);
    expect(remote.tasks.filter((id) => id === taskId)).toHaveLength(1);
    expect(remote.tasks).toHaveLength(1);
    const note = await app.application.db.message.findFirstOrThrow({
      where: { threadId: thread.id, toolRunId: runId },
    });
    expect(note).toMatchObject({ role: 'system', status: 'complete' });
    expect(note.content).toContain('job kappa done after 12 steps');
    expect(await app.application.db.turn.count({ where: { threadId: thread.id, kind: 'follow-up' } })).toBe(1);
    expect((await helpers.messages(thread.id)).at(-1)?.content).toBe('The remote job has ended.');
    assertRequestsValid(stub, app.application.deps.settings.budget);
  }, 180_000);
});
