import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  threadHelpers,
  isServerNote,
  type ThreadHelpers,
} from './tool-test-kit';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';

const root = path.resolve(import.meta.dirname, '../..');

function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (isServerNote(last)) return replyWithText('The analysis is back.');
  if (last?.role === 'tool') return replyWithText('Analysis started.');
  if (lastUserText(request.body) === 'analyze slowly')
    return replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 1200 } }]);
  return replyWithText('ok');
}

interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<void>;
}

describe('a tools worker killed during a run', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;
  let dataDir: string;
  const workers: WorkerProcess[] = [];
  let first: WorkerProcess;

  /** `npm run worker` as its own process (node with tsx's loader: one pid, so SIGKILL kills the worker itself). */
  async function startWorker(): Promise<WorkerProcess> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      DATABASE_URL: app.databaseUrl,
      REDIS_URL: app.redisUrl,
      REDIS_PREFIX: app.prefix,
      OPENAI_BASE_URL: stub.url,
      AUTH_SECRET: app.authSecret,
      ADMIN_TOKEN: randomBytes(16).toString('hex'),
      WORKER_LOCK_MS: '1500',
      WORKER_STALLED_INTERVAL_MS: '500',
      SWEEP_INTERVAL_MS: '60000',
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts', 'worker'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const worker = { child, exited };
    workers.push(worker);
    await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`worker exited: ${output}`);
        return output.includes('worker running');
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'the worker process to start' },
    );
    return worker;
  }

  beforeAll(async () => {
    dataDir = await makeServiceTempDir('tools-worker-');
    stub = await startOpenAIStub({ classifyRequest, responder: responder(chat) });
    // The server runs no workers: tool runs go to the worker processes this test starts and kills. Its sweeper
    // is slowed down so the follow-up can only start through the worker's Redis kick.
    app = await startTestApp({
      mode: 'serve',
      env: { OPENAI_BASE_URL: stub.url },
      tuning: { sweepIntervalMs: 600_000 },
    });
    helpers = await threadHelpers(app);
    // The first worker process boots here (several seconds on a busy machine): the test's own time is the crash,
    // the retry and the follow-up, not the boot.
    first = await startWorker();
  });
  afterAll(async () => {
    for (const worker of workers) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await app?.stop();
    await stub?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is retried by another worker and reported exactly once', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'analyze slowly');
    const runId = /as run ([0-9a-f-]{36})/.exec(result.messages[1]?.content ?? '')?.[1] ?? '';
    const getRun = async () =>
      (await (await app.api(`/api/tool-runs/${runId}`, { token: helpers.token })).json()) as ToolRunDto;
    await waitFor(
      async () => {
        const run = await getRun();
        return run.status === 'running' && run.progress >= 0.25;
      },
      { timeoutMs: 30_000, what: 'the run to be half way in the first worker' },
    );

    first.child.kill('SIGKILL');
    await first.exited;
    await startWorker();

    await waitFor(
      async () => {
        const turns = await app.application.db.turn.findMany({ where: { threadId: thread.id, kind: 'follow-up' } });
        return turns.length > 0 && turns.every((turn) => turn.status === 'complete');
      },
      { timeoutMs: 60_000, what: 'the follow-up after the retried run' },
    );

    const run = await app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('succeeded');
    expect(run.attempts).toBe(2);
    expect(run.reportedAt).not.toBeNull();
    const runMessages = await app.application.db.message.findMany({ where: { threadId: thread.id, toolRunId: runId } });
    expect(runMessages).toHaveLength(1);
    expect(runMessages[0]).toMatchObject({ role: 'system', status: 'complete' });
    expect(runMessages[0]?.content).toContain(`Result of analyze_thread (run ${runId}`);
    const notes = await app.application.db.contextEntry.findMany({ where: { threadId: thread.id, role: 'system' } });
    expect(notes).toHaveLength(1);
    expect(await app.application.db.turn.count({ where: { threadId: thread.id, kind: 'follow-up' } })).toBe(1);
    const followUps = stub.requests.filter((request) => request.kind === 'chat' && isServerNote(lastMessage(request)));
    expect(followUps).toHaveLength(1);
    const transcript = await helpers.messages(thread.id);
    expect(transcript.at(-1)?.content).toBe('The analysis is back.');
    assertRequestsValid(stub, app.application.deps.settings.budget);
  });
});
