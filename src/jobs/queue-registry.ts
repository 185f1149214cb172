import type { Queue } from 'bullmq';
import type { QueueRegistry } from '../core/ports';

/** The registry of BullMQ queues (the composition root's `queues`). */
export type BullQueueRegistry = QueueRegistry<Queue>;

export function createQueueRegistry(): BullQueueRegistry {
  const queues = new Map<string, Queue>();
  const listeners: ((queue: Queue) => void)[] = [];
  return {
    register(queue) {
      if (queues.has(queue.name)) throw new Error(`queue ${queue.name} is already registered`);
      queues.set(queue.name, queue);
      for (const listener of listeners) listener(queue);
    },
    list: () => [...queues.values()],
    onRegister(listener) {
      listeners.push(listener);
    },
    async counts(timeoutMs = 2000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
      });
      const all = Promise.all(
        [...queues.values()].map(async (queue) => {
          const counts = await queue.getJobCounts(
            'waiting',
            'active',
            'failed',
            'delayed',
            'completed',
            'prioritized',
            'waiting-children',
          );
          return {
            name: queue.name,
            // Prioritized and waiting-for-children jobs are waiting too, from an admin's point of view.
            waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts['waiting-children'] ?? 0),
            active: counts.active ?? 0,
            failed: counts.failed ?? 0,
            delayed: counts.delayed ?? 0,
            completed: counts.completed ?? 0,
          };
        }),
      );
      try {
        return await Promise.race([all, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
