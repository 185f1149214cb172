// Idle folds on real Redis and BullMQ: a thread quiet longer than PROMPT_CACHE_TTL (here 2 s) is folded in the
// background, with no trigger, once its window holds enough beyond the keep policy; the turns push the fold back.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { AdminThreadDetailDto } from '../../src/shared/admin-api';
import { IDLE_FOLD_JOB } from '../../src/jobs/queue-names';
import { useChatServer } from '../support/chat-server';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { waitFor } from '../support/wait-for';
import { memoryKit } from '../memory/memory-test-kit';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
const TTL_MS = 2000;

describe('idle folds (PROMPT_CACHE_TTL)', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder() },
    // A trigger no test reaches: any fold here is an idle fold (or the forced one, below).
    env: {
      SUMMARY_TRIGGER: 'messages=200',
      SUMMARY_KEEP: 'messages=2',
      PROMPT_CACHE_TTL: String(TTL_MS / 1000),
      IDLE_FOLD_MIN_TOKENS: '20',
    },
  });
  const kit = memoryKit(server);

  async function newThread() {
    return kit.createThread();
  }
  async function send(threadId: string, content: string): Promise<void> {
    await kit.send(threadId, content);
  }
  async function detail(threadId: string): Promise<AdminThreadDetailDto> {
    return (await (
      await server.app.api(`/api/admin/threads/${threadId}`, { token: ADMIN_TOKEN })
    ).json()) as AdminThreadDetailDto;
  }
  async function idleJobs(threadId: string) {
    const jobs = await server.app.application.folds.queue.getJobs(['delayed', 'waiting', 'active']);
    return jobs.filter((job) => job.name === IDLE_FOLD_JOB && (job.data as { threadId: string }).threadId === threadId);
  }
  /**
   * The idle job's due time once the last turn's push-back reached it (it is scheduled after the turn ends). Read
   * from the delayed set's score (due time × 0x1000 + a counter): a reschedule moves the job there and updates its
   * `delay`, not its `timestamp`.
   */
  async function dueAfter(threadId: string, after: number): Promise<number> {
    const redis = new Redis(server.app.redisUrl);
    try {
      let due = 0;
      await waitFor(
        async () => {
          const jobs = await idleJobs(threadId);
          const score =
            jobs.length === 1 && jobs[0]?.id
              ? await redis.zscore(`${server.app.prefix}:summary:delayed`, jobs[0].id)
              : null;
          due = score === null ? 0 : Math.floor(Number(score) / 0x1000);
          return due >= after + TTL_MS;
        },
        { timeoutMs: 10_000, what: 'the idle fold to be scheduled' },
      );
      return due;
    } finally {
      redis.disconnect();
    }
  }

  it('folds a thread once it has been quiet for the cache lifetime, one delayed job per thread pushed back by each turn', async () => {
    const thread = await newThread();
    const started = Date.now();
    await send(thread.id, 'Remember order CODE-7001 for the warehouse in Lyon, please.');
    const secondSent = Date.now();
    await send(thread.id, 'And CODE-7002 goes to the Porto office next week.');
    // One delayed job for the thread, however many turns scheduled it.
    const firstDue = await dueAfter(thread.id, secondSent);
    const [job] = await idleJobs(thread.id);
    expect(await job?.getState()).toBe('delayed');

    // Another turn before the job is due. A push-back within idleFoldSlack (a tenth of the lifetime) of the last one
    // is skipped by design (the job is due that much later than the lifetime): the turn comes once that has passed,
    // so it pushes back (firstDue is the last push-back + lifetime + slack). A fast machine sends all three turns
    // within the slack otherwise. The margin to the job's due time stays the lifetime less one turn.
    expect((await detail(thread.id)).context.revision).toBe(0);
    const slackEnds = firstDue - TTL_MS + 20;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, slackEnds - Date.now())));
    const lastSent = Date.now();
    await send(thread.id, 'Last one: CODE-7003 is the invoice number.');
    // Pushed back (at most once per a tenth of the lifetime, idleFoldSlack): due the whole lifetime after this turn.
    const pushedDue = await dueAfter(thread.id, lastSent);
    expect(pushedDue).toBeGreaterThan(firstDue);
    const pushed = await idleJobs(thread.id);
    expect(pushed.map((each) => each.id)).toEqual([job?.id]);

    await waitFor(async () => (await detail(thread.id)).context.revision === 1, {
      timeoutMs: 30_000,
      what: 'the idle fold',
    });
    const folded = await detail(thread.id);
    // Quiet since the last turn: never before the cache lifetime after it (the first due time had passed by then).
    expect(Date.now()).toBeGreaterThanOrEqual(pushedDue);
    expect(Date.now() - started).toBeGreaterThan(TTL_MS);
    expect(folded.revisions.at(-1)).toMatchObject({ revision: 1, author: 'fold', fromSeq: 1 });
    // The keep policy (2 messages) stays in the window; the first two exchanges were folded.
    expect(folded.context.coveredThroughSeq).toBe(4);
    expect(folded.context.summaryText).toContain('CODE-7001');
    expect(await idleJobs(thread.id)).toHaveLength(0);
  });

  it('leaves a thread whose window holds too little beyond the keep policy', async () => {
    const thread = await newThread();
    // One exchange: the keep policy keeps both messages, nothing lies beyond it.
    const sent = Date.now();
    await send(thread.id, 'Hi.');
    await dueAfter(thread.id, sent);
    await waitFor(async () => (await idleJobs(thread.id)).length === 0, {
      timeoutMs: 30_000,
      what: 'the idle fold job to run',
    });
    expect((await detail(thread.id)).context.revision).toBe(0);
  });

  it('never swallows a trigger fold: the idle job has an id of its own', async () => {
    const thread = await newThread();
    await send(thread.id, 'Note CODE-7101.');
    const sent = Date.now();
    await send(thread.id, 'Note CODE-7102.');
    await dueAfter(thread.id, sent);
    // The idle fold put off for a minute: a fold within the next 30 s can only be the trigger's.
    const [idle] = await idleJobs(thread.id);
    await idle?.changeDelay(60_000);
    try {
      const jobId = await server.app.application.folds.enqueueFold(thread.id, 'trigger fired', true);
      expect(jobId).not.toBeNull();
      expect(jobId).not.toBe(idle?.id);
      await waitFor(async () => (await detail(thread.id)).context.revision >= 1, {
        timeoutMs: 30_000,
        what: 'the trigger fold',
      });
      expect((await idleJobs(thread.id)).map((job) => job.id)).toEqual([idle?.id]);
      expect(await idle?.getState()).toBe('delayed');
    } finally {
      await idle?.remove();
    }
  });
});
