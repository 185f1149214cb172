import { rm } from 'node:fs/promises';
import { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';
import { IDLE_FOLD_JOB, SUMMARY_QUEUE } from '../../src/jobs/queue-names';

const POLICY = { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', SUMMARY_MAX_TOKENS: '200' };

describe('a worker killed during a summary call', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let dataDir: string;
  const workers: WorkerProcess[] = [];
  let first: WorkerProcess;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder({ delayMs: 60_000 }) });
    // The HTTP side only: folds run in separate worker processes.
    app = await startTestApp({ mode: 'serve', env: { OPENAI_BASE_URL: stub.url, ...POLICY } });
    dataDir = await makeServiceTempDir('chat-worker-');
    // The first worker process boots here (seconds on a busy machine); it has nothing to do until the test's turns
    // reach the trigger.
    first = startWorkerProcess(workerEnv());
    workers.push(first);
    await first.ready;
  });
  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    await app?.stop();
    await stub?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const workerEnv = () => ({
    DATABASE_URL: app.databaseUrl,
    REDIS_URL: app.redisUrl,
    REDIS_PREFIX: app.prefix,
    OPENAI_BASE_URL: stub.url,
    DATA_DIR: dataDir,
    WORKER_LOCK_MS: '1500',
    WORKER_STALLED_INTERVAL_MS: '500',
    ...POLICY,
  });

  it('folds once after the restart, with nothing lost or doubled', async () => {
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    for (let turn = 1; turn <= 3; turn += 1) {
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `turn ${turn} keeps CODE-${turn}` },
      });
      expect(response.status).toBe(201);
    }

    await waitFor(() => stub.requests.some((request) => request.kind === 'summary'), {
      timeoutMs: 20_000,
      what: 'the summary call',
    });
    await first.kill('SIGKILL');

    // The next worker answers at once; the killed job must be taken over from its expired lock.
    stub.setResponder(summaryResponder());
    const second = startWorkerProcess(workerEnv());
    workers.push(second);
    await second.ready;

    const client = new pg.Client({ connectionString: app.databaseUrl });
    await client.connect();
    try {
      await waitFor(
        async () =>
          (await client.query('SELECT 1 FROM summary_revisions WHERE thread_id = $1', [thread.id])).rowCount === 1,
        { timeoutMs: 30_000, what: 'the fold to complete after the restart' },
      ).catch((error: unknown) => {
        throw new Error(
          `${String(error)}\nsecond worker: ${second.output().slice(-3000)}\nstub: ${stub.requests.map((r) => r.kind + ':' + r.status).join(',')}`,
        );
      });
      // A duplicate run could only come from a fold job still queued or running: wait until the summary queue has
      // none left (every job settled), then check there is one revision.
      const queue = new Queue(SUMMARY_QUEUE, { connection: { url: app.redisUrl }, prefix: app.prefix });
      try {
        await waitFor(
          async () => {
            const counts = await queue.getJobCounts('waiting', 'active', 'prioritized', 'completed');
            // The thread's idle fold waits PROMPT_CACHE_TTL (minutes) after its last turn: delayed, and not a fold job.
            const delayedFolds = (await queue.getJobs(['delayed'])).filter((job) => job.name !== IDLE_FOLD_JOB);
            return (
              counts.completed! >= 1 &&
              counts.waiting === 0 &&
              counts.active === 0 &&
              delayedFolds.length === 0 &&
              counts.prioritized === 0
            );
          },
          { timeoutMs: 30_000, intervalMs: 100, what: 'the summary queue to settle' },
        );
      } finally {
        await queue.close();
      }
      const revisions = await client.query<{ from_seq: number; through_seq: number; text: string }>(
        'SELECT from_seq, through_seq, text FROM summary_revisions WHERE thread_id = $1',
        [thread.id],
      );
      expect(revisions.rows).toHaveLength(1);
      const revision = revisions.rows[0]!;
      expect(revision.from_seq).toBe(1);
      expect(revision.text).toContain('CODE-1');
      const threadRow = await client.query<{
        summary_covered_through_seq: number;
        summary_revision: number;
        last_seq: number;
      }>('SELECT summary_covered_through_seq, summary_revision, last_seq FROM threads WHERE id = $1', [thread.id]);
      expect(threadRow.rows[0]).toMatchObject({
        summary_covered_through_seq: revision.through_seq,
        summary_revision: 1,
      });
      // Every seq is either covered by the summary or still in the window, exactly once.
      const window = await client.query<{ seq: number }>(
        'SELECT seq FROM context_entries WHERE thread_id = $1 ORDER BY seq',
        [thread.id],
      );
      const lastSeq = threadRow.rows[0]!.last_seq;
      expect(window.rows.map((row) => row.seq)).toEqual(
        Array.from({ length: lastSeq - revision.through_seq }, (_, index) => revision.through_seq + 1 + index),
      );
      const messages = await client.query('SELECT seq FROM messages WHERE thread_id = $1', [thread.id]);
      expect(messages.rowCount).toBe(lastSeq);
    } finally {
      await client.end();
    }
  }, 90_000);
});
