import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type {
  FoldQueue,
  ForgetRebuildQueue,
  IdleFoldQueue,
  RebuildQueue,
  TitleQueue,
  ToolQueue,
} from '../../src/core/ports';
import type { QueueName } from '../fakes';

/** A job waiting for a worker, as the contract observes it. */
export interface PendingJob {
  id: string;
  name: string;
  data: Record<string, unknown>;
  /** Not handed to a worker before its delay. */
  delayed: boolean;
}

/** The producers under test and a way to watch their queues and work them off. */
export interface QueueHarness {
  folds: FoldQueue & RebuildQueue & ForgetRebuildQueue & IdleFoldQueue & TitleQueue;
  tools: ToolQueue;
  /** Jobs of the queue no worker took yet (waiting or delayed), in the order they were added. */
  pending(queue: QueueName): Promise<PendingJob[]>;
  /** A worker takes every ready job of the queue and completes it, or fails it for good; returns their ids. */
  work(queue: QueueName, outcome: 'complete' | 'fail'): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The contract of the queue ports (FoldQueue, RebuildQueue, ForgetRebuildQueue, IdleFoldQueue, TitleQueue, ToolQueue) as the core and the
 * sweeper rely on them: deduplication while a job is pending, never after it finished or failed (a failed fold must
 * not stop the thread's folds), payloads of ids, delayed polls. The BullMQ producers on real Redis
 * (queues.int.test.ts) and the in-memory queues (queues.unit.test.ts) must both pass it.
 */
export function describeQueueContract(name: string, make: () => Promise<QueueHarness>): void {
  describe(`queue contract: ${name}`, () => {
    let open: QueueHarness | null = null;
    const harness = async () => {
      open = await make();
      return open;
    };
    afterEach(async () => {
      await open?.close();
      open = null;
    });

    it('deduplicates folds per thread while one is pending: one job, the first payload, the same id', async () => {
      const queues = await harness();
      const thread = randomUUID();
      const other = randomUUID();
      const first = await queues.folds.enqueueFold(thread, 'trigger fired');
      const again = await queues.folds.enqueueFold(thread, 'sweeper', true);
      const elsewhere = await queues.folds.enqueueFold(other, 'trigger fired', true);
      expect(first).toEqual(expect.any(String));
      expect(again).toBe(first);
      expect(elsewhere).not.toBe(first);
      expect(await queues.pending('summary')).toEqual([
        { id: first, name: 'fold', data: { threadId: thread, reason: 'trigger fired', force: false }, delayed: false },
        {
          id: elsewhere,
          name: 'fold',
          data: { threadId: other, reason: 'trigger fired', force: true },
          delayed: false,
        },
      ]);
    });

    it('takes a new fold of the thread once the last one completed, and once it failed for good', async () => {
      const queues = await harness();
      const thread = randomUUID();
      const first = await queues.folds.enqueueFold(thread, 'first');
      expect(await queues.work('summary', 'complete')).toEqual([first]);
      const second = await queues.folds.enqueueFold(thread, 'second');
      expect(second).not.toBe(first);
      expect(await queues.work('summary', 'fail')).toEqual([second]);
      const third = await queues.folds.enqueueFold(thread, 'third');
      expect([first, second]).not.toContain(third);
      expect((await queues.pending('summary')).map((job) => job.data.reason)).toEqual(['third']);
    });

    it('keeps rebuilds apart from folds: one rebuild per thread, one forget-rebuild per withdrawal (version)', async () => {
      const queues = await harness();
      const thread = randomUUID();
      const fold = await queues.folds.enqueueFold(thread, 'trigger');
      const rebuild = await queues.folds.enqueueRebuild({ threadId: thread, actorId: 'admin-1' });
      expect(await queues.folds.enqueueRebuild({ threadId: thread, actorId: 'admin-2' })).toBe(rebuild);
      const forgotten = await queues.folds.enqueueForgetRebuild({ threadId: thread, version: 7 });
      expect(await queues.folds.enqueueForgetRebuild({ threadId: thread, version: 7 })).toBe(forgotten);
      const later = await queues.folds.enqueueForgetRebuild({ threadId: thread, version: 8 });
      expect(new Set([fold, rebuild, forgotten, later]).size).toBe(4);
      expect((await queues.pending('summary')).map((job) => [job.name, job.data])).toEqual([
        ['fold', { threadId: thread, reason: 'trigger', force: false }],
        ['rebuild', { threadId: thread, actorId: 'admin-1' }],
        ['forget-rebuild', { threadId: thread, version: 7 }],
        ['forget-rebuild', { threadId: thread, version: 8 }],
      ]);
    });

    it("keeps one delayed idle fold per thread however often it is pushed back, apart from the thread's folds", async () => {
      const queues = await harness();
      const thread = randomUUID();
      const other = randomUUID();
      await queues.folds.scheduleIdleFold(thread);
      await queues.folds.scheduleIdleFold(thread);
      await queues.folds.scheduleIdleFold(other);
      const fold = await queues.folds.enqueueFold(thread, 'trigger');
      const pending = await queues.pending('summary');
      expect(pending.map((job) => [job.name, job.data, job.delayed])).toEqual([
        ['idle-fold', { threadId: thread }, true],
        ['idle-fold', { threadId: other }, true],
        ['fold', { threadId: thread, reason: 'trigger', force: false }, false],
      ]);
      // The trigger fold is ready at once; the idle folds wait for the cache to go cold.
      expect(await queues.work('summary', 'complete')).toEqual([fold]);
    });

    it('titles a thread once per pending job, and again once that job finished', async () => {
      const queues = await harness();
      const thread = randomUUID();
      await queues.folds.enqueueTitle(thread);
      await queues.folds.enqueueTitle(thread);
      expect((await queues.pending('summary')).map((job) => [job.name, job.data])).toEqual([
        ['title', { threadId: thread }],
      ]);
      expect(await queues.work('summary', 'fail')).toHaveLength(1);
      await queues.folds.enqueueTitle(thread);
      expect((await queues.pending('summary')).map((job) => job.name)).toEqual(['title']);
    });

    it('runs a tool run once per pending job, again after it finished; polls are never merged and wait their delay', async () => {
      const queues = await harness();
      const run = randomUUID();
      await queues.tools.enqueueToolRun(run);
      await queues.tools.enqueueToolRun(run);
      expect((await queues.pending('tools')).map((job) => [job.name, job.data])).toEqual([['run', { runId: run }]]);
      expect(await queues.work('tools', 'complete')).toHaveLength(1);
      await queues.tools.enqueueToolRun(run);
      await queues.tools.enqueuePoll(run, 60_000);
      await queues.tools.enqueuePoll(run, 60_000);
      const pending = await queues.pending('tools');
      expect(pending.map((job) => [job.name, job.data, job.delayed])).toEqual([
        ['run', { runId: run }, false],
        ['poll', { runId: run }, true],
        ['poll', { runId: run }, true],
      ]);
      // Only the run is ready: the polls wait for their delay.
      expect(await queues.work('tools', 'complete')).toEqual([pending[0]?.id]);
      expect((await queues.pending('tools')).map((job) => job.name)).toEqual(['poll', 'poll']);
    });
  });
}
