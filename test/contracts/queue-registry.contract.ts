import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { QueueCounts, QueueRegistry } from '../../src/core/ports';
import type { QueueName } from '../fakes';
import type { QueueHarness } from './queue.contract';

/** The producers and their queues (not registered yet), a registry, and a queue whose Redis never answers. */
export interface QueueRegistryHarness<TQueue> extends Pick<QueueHarness, 'folds' | 'tools' | 'work' | 'close'> {
  registry: QueueRegistry<TQueue>;
  /** The queues the producers add to, as the composition root registers them. */
  queues: Record<QueueName, TQueue>;
  /** The summary queue on a Redis that takes the connection and never answers. */
  unanswered(): Promise<TQueue>;
}

const none = (name: QueueName): QueueCounts => ({ name, waiting: 0, active: 0, failed: 0, delayed: 0, completed: 0 });

/**
 * The QueueRegistry contract, as admins see it (GET /api/admin/queues, the bull-board dashboard): the registered
 * queues, the listener that adds each to the dashboard, every queue's job counts by state, and an answer within the
 * timeout when Redis does not answer. src/jobs/queue-registry.ts on BullMQ and real Redis (queues.int.test.ts) and
 * the in-memory registry over the in-memory queues (queues.unit.test.ts) must both pass it. Adapter-only (not held
 * here): BullMQ's prioritized and waiting-children jobs counted as waiting (the producers add neither), and the
 * dashboard's own reads of the queues.
 */
export function describeQueueRegistryContract<TQueue>(
  name: string,
  make: () => Promise<QueueRegistryHarness<TQueue>>,
): void {
  describe(`QueueRegistry contract: ${name}`, () => {
    let open: QueueRegistryHarness<TQueue> | null = null;
    const harness = async () => {
      open = await make();
      return open;
    };
    afterEach(async () => {
      await open?.close();
      open = null;
    });

    it('lists the registered queues in registration order and refuses a second queue of the same name', async () => {
      const { registry, queues } = await harness();
      expect(registry.list()).toEqual([]);
      registry.register(queues.summary);
      registry.register(queues.tools);
      const listed = registry.list();
      expect(listed).toHaveLength(2);
      expect(listed[0]).toBe(queues.summary);
      expect(listed[1]).toBe(queues.tools);
      expect(() => registry.register(queues.tools)).toThrow(/already registered/);
      expect(registry.list()).toHaveLength(2);
    });

    it('tells a listener of every queue registered after it, not of those before (the dashboard adds each)', async () => {
      const { registry, queues } = await harness();
      registry.register(queues.summary);
      const first: TQueue[] = [];
      const second: TQueue[] = [];
      registry.onRegister((queue) => first.push(queue));
      registry.onRegister((queue) => second.push(queue));
      registry.register(queues.tools);
      expect(first).toHaveLength(1);
      expect(first[0]).toBe(queues.tools);
      expect(second).toHaveLength(1);
      expect(second[0]).toBe(queues.tools);
    });

    it('counts every registered queue by name, zero when empty, in registration order', async () => {
      const { registry, queues } = await harness();
      expect(await registry.counts()).toEqual([]);
      registry.register(queues.tools);
      registry.register(queues.summary);
      expect(await registry.counts()).toEqual([none('tools'), none('summary')]);
    });

    it("counts each queue's jobs by state: waiting, delayed, completed and failed", async () => {
      const queues = await harness();
      queues.registry.register(queues.queues.summary);
      queues.registry.register(queues.queues.tools);
      await queues.folds.enqueueFold(randomUUID(), 'completes');
      expect(await queues.work('summary', 'complete')).toHaveLength(1);
      await queues.folds.enqueueFold(randomUUID(), 'fails');
      expect(await queues.work('summary', 'fail')).toHaveLength(1);
      await queues.folds.enqueueFold(randomUUID(), 'waits');
      await queues.folds.enqueueRebuild({ threadId: randomUUID(), actorId: 'admin-1' });
      await queues.tools.enqueueToolRun(randomUUID());
      await queues.tools.enqueuePoll(randomUUID(), 60_000);
      expect(await queues.registry.counts()).toEqual([
        { ...none('summary'), waiting: 2, completed: 1, failed: 1 },
        { ...none('tools'), waiting: 1, delayed: 1 },
      ]);
    });

    it('rejects the counts when Redis does not answer, within the timeout it is given', async () => {
      const { registry, unanswered } = await harness();
      registry.register(await unanswered());
      const started = Date.now();
      await expect(registry.counts(300)).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(1500);
    });
  });
}
