import { randomBytes } from 'node:crypto';
import { UnrecoverableError, Worker, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { inject } from 'vitest';
import { createFoldProducer } from '../../src/jobs/fold-queue';
import { createProducerConnection, createWorkerConnection } from '../../src/jobs/redis-connections';
import { createToolProducer } from '../../src/jobs/tool-queue';
import type { QueueName } from '../fakes';
import { waitFor } from '../support/wait-for';
import { describeQueueContract } from './queue.contract';

const ready = (connection: Redis) =>
  connection.status === 'ready'
    ? Promise.resolve()
    : new Promise<void>((resolve) => connection.once('ready', () => resolve()));

/** Hands the queue's ready jobs to a real BullMQ worker that completes them or fails them for good. */
async function workOff(queue: Queue, outcome: 'complete' | 'fail'): Promise<string[]> {
  const ids = (await queue.getJobs(['waiting', 'prioritized']))
    .map((job) => job.id ?? '')
    .sort((a, b) => Number(a) - Number(b));
  if (ids.length === 0) return [];
  const connection = createWorkerConnection(inject('redisUrl'));
  const finished = new Set<string>();
  const worker = new Worker(
    queue.name,
    async () => {
      if (outcome === 'fail') throw new UnrecoverableError('failed for good');
    },
    { connection, prefix: queue.opts.prefix ?? 'bull' },
  );
  worker.on('completed', (job) => finished.add(job.id ?? ''));
  worker.on('failed', (job) => finished.add(job?.id ?? ''));
  try {
    await waitFor(() => ids.every((id) => finished.has(id)), {
      timeoutMs: 20_000,
      what: `jobs ${ids.join(', ')} to be worked off`,
    });
  } finally {
    await worker.close();
    await connection.quit();
  }
  return ids;
}

// The queue contract on the BullMQ producers against the test Redis, each case under its own key prefix.
describeQueueContract('BullMQ producers on Redis', async () => {
  const connection = createProducerConnection(inject('redisUrl'));
  await ready(connection);
  const prefix = `contract${randomBytes(5).toString('hex')}`;
  const folds = createFoldProducer({ connection, prefix });
  const tools = createToolProducer({ connection, prefix });
  const queues: Record<QueueName, Queue> = { summary: folds.queue as Queue, tools: tools.queue as Queue };
  return {
    folds,
    tools,
    async pending(name) {
      const jobs = await queues[name].getJobs(['waiting', 'prioritized', 'delayed']);
      const rows = await Promise.all(
        jobs.map(async (job) => ({
          id: job.id ?? '',
          name: job.name,
          data: job.data as Record<string, unknown>,
          delayed: await job.isDelayed(),
        })),
      );
      return rows.sort((a, b) => Number(a.id) - Number(b.id));
    },
    work: (name, outcome) => workOff(queues[name], outcome),
    async close() {
      await queues.summary.obliterate({ force: true });
      await queues.tools.obliterate({ force: true });
      await folds.close();
      await tools.close();
      await connection.quit();
    },
  };
});
