import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** How long an enqueue may wait for Redis: a dead connection must fail the enqueue fast, never hang a turn. */
export const ENQUEUE_TIMEOUT_MS = 2000;

/**
 * A queue for producers on the request path: bounded attempts with exponential backoff, finished jobs kept an hour
 * (failed ones a week, for admins), and Redis outages reported through `onError` while it reconnects by itself.
 */
export function createProducerQueue<Payload>(
  name: string,
  options: { connection: Redis; prefix: string; attempts: number; onError?: (error: Error) => void },
): Queue<Payload> {
  const queue = new Queue<Payload>(name, {
    connection: options.connection,
    prefix: options.prefix,
    defaultJobOptions: {
      attempts: options.attempts,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
  queue.on('error', (error) => options.onError?.(error));
  return queue;
}

/** Rejects when Redis does not answer an enqueue within ENQUEUE_TIMEOUT_MS. */
export function withEnqueueTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis did not answer within ${ENQUEUE_TIMEOUT_MS} ms`)),
        ENQUEUE_TIMEOUT_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}
