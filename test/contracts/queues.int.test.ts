import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { inject } from 'vitest';
import { createFoldProducer } from '../../src/jobs/fold-queue';
import { createQueueRegistry } from '../../src/jobs/queue-registry';
import { createProducerConnection, createWorkerConnection } from '../../src/jobs/redis-connections';
import { createToolProducer } from '../../src/jobs/tool-queue';
import type { QueueName } from '../fakes';
import { waitFor } from '../support/wait-for';
import { describeQueueContract } from './queue.contract';
import { describeQueueRegistryContract } from './queue-registry.contract';

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

/** A summary queue on a server that takes the connection and never answers (the sockets are kept until `close`). */
async function unansweredQueue(prefix: string) {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const connection = createProducerConnection(`redis://127.0.0.1:${port}`);
  const queue = new Queue('summary', { connection, prefix });
  // Nothing answers: the connection's errors are this queue's expected state, not the test's outcome.
  queue.on('error', () => undefined);
  const close = async () => {
    connection.disconnect();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return { queue, close };
}

// The registry (src/jobs/queue-registry.ts) over the BullMQ producers' queues on the test Redis, each case under its
// own key prefix; queues.unit.test.ts runs the same contract on the in-memory registry.
describeQueueRegistryContract<Queue>('BullMQ queues on Redis', async () => {
  const connection = createProducerConnection(inject('redisUrl'));
  await ready(connection);
  const prefix = `registry${randomBytes(5).toString('hex')}`;
  const folds = createFoldProducer({ connection, prefix });
  const tools = createToolProducer({ connection, prefix });
  const queues: Record<QueueName, Queue> = { summary: folds.queue as Queue, tools: tools.queue as Queue };
  const silent: { close(): Promise<void> }[] = [];
  return {
    folds,
    tools,
    registry: createQueueRegistry(),
    queues,
    async unanswered() {
      const unanswered = await unansweredQueue(prefix);
      silent.push(unanswered);
      return unanswered.queue;
    },
    work: (name, outcome) => workOff(queues[name], outcome),
    async close() {
      for (const unanswered of silent) await unanswered.close();
      await queues.summary.obliterate({ force: true });
      await queues.tools.obliterate({ force: true });
      await folds.close();
      await tools.close();
      await connection.quit();
    },
  };
});
