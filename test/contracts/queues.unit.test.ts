import { createMemoryQueueRegistry, createMemoryQueues } from '../fakes';
import { describeQueueContract } from './queue.contract';
import { describeQueueRegistryContract } from './queue-registry.contract';

// The queue contract on the in-memory queues; queues.int.test.ts runs it on the BullMQ producers and real Redis.
describeQueueContract('in-memory queues', async () => {
  const queues = createMemoryQueues();
  return {
    folds: queues.folds,
    tools: queues.tools,
    async pending(queue) {
      return queues.jobs
        .filter((job) => job.queue === queue && (job.state === 'waiting' || job.state === 'delayed'))
        .map((job) => ({ id: job.id, name: job.name, data: job.data, delayed: job.readyAt > Date.now() }));
    },
    async work(queue, outcome) {
      const worked = await queues.work(queue, async () => {
        if (outcome === 'fail') throw new Error('failed for good');
      });
      return worked.map((job) => job.id);
    },
    close: async () => undefined,
  };
});

// The registry of the admin's queue list and dashboard over the in-memory queues; queues.int.test.ts runs it on
// src/jobs/queue-registry.ts with the BullMQ queues on real Redis.
describeQueueRegistryContract('in-memory registry', async () => {
  const queues = createMemoryQueues();
  return {
    folds: queues.folds,
    tools: queues.tools,
    registry: createMemoryQueueRegistry(),
    queues: { summary: { name: 'summary', queues }, tools: { name: 'tools', queues } },
    unanswered: async () => ({ name: 'summary', queues: { ...createMemoryQueues(), down: true } }),
    async work(queue, outcome) {
      const worked = await queues.work(queue, async () => {
        if (outcome === 'fail') throw new Error('failed for good');
      });
      return worked.map((job) => job.id);
    },
    close: async () => undefined,
  };
});
