import type { QueueCounts, QueueRegistry } from '../../src/core/ports';
import type { MemoryQueues, QueueName } from './memory-queues';

/** A queue as the in-memory registry holds it: one queue's name over the jobs of a MemoryQueues. */
export interface MemoryRegisteredQueue {
  name: QueueName;
  queues: MemoryQueues;
}

/**
 * QueueRegistry in memory (test/contracts/queue-registry.contract.ts holds it to src/jobs/queue-registry.ts on
 * BullMQ and Redis): the queues by name in registration order, their listeners, and counts read from the jobs'
 * states. A queue whose MemoryQueues is `down` never answers, as Redis that does not: `counts` rejects after
 * `timeoutMs`.
 */
export function createMemoryQueueRegistry(): QueueRegistry<MemoryRegisteredQueue> {
  const registered = new Map<string, MemoryRegisteredQueue>();
  const listeners: ((queue: MemoryRegisteredQueue) => void)[] = [];
  return {
    register(queue) {
      if (registered.has(queue.name)) throw new Error(`queue ${queue.name} is already registered`);
      registered.set(queue.name, queue);
      for (const listener of listeners) listener(queue);
    },
    list: () => [...registered.values()],
    onRegister(listener) {
      listeners.push(listener);
    },
    async counts(timeoutMs = 2000) {
      const queues = [...registered.values()];
      if (queues.some((queue) => queue.queues.down)) {
        await new Promise((resolve) => setTimeout(resolve, timeoutMs));
        throw new Error(`Redis did not answer within ${timeoutMs} ms`);
      }
      return queues.map(countsOf);
    },
  };
}

function countsOf({ name, queues }: MemoryRegisteredQueue): QueueCounts {
  const jobs = queues.jobs.filter((job) => job.queue === name);
  const inState = (state: string) => jobs.filter((job) => job.state === state).length;
  return {
    name,
    waiting: inState('waiting'),
    active: inState('active'),
    failed: inState('failed'),
    delayed: inState('delayed'),
    completed: inState('completed'),
  };
}
