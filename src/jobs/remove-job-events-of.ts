import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** Stream entries read at a time. */
const PAGE = 1000;

/**
 * Deletes the entries of each queue's events stream (`<prefix>:<queue>:events`, what QueueEvents listeners read)
 * that name one of `ids` in any field: deduplication ids (`fold-<threadId>`), failure reasons, return values. An
 * erased user's thread and run ids are then gone from Redis. The stream is capped by BullMQ (maxLenEvents, 10,000
 * by default), so reading it whole is bounded; returns how many entries were deleted. `redis`: a connection to the
 * queues' Redis.
 */
export async function removeJobEventsOf(input: {
  redis: Redis;
  queues: Queue[];
  ids: readonly string[];
}): Promise<number> {
  const { redis } = input;
  if (input.ids.length === 0) return 0;
  let deleted = 0;
  for (const queue of input.queues) {
    const stream = queue.keys.events;
    if (!stream) continue;
    const matching: string[] = [];
    for (let start = '-'; ;) {
      const entries = await redis.xrange(stream, start, '+', 'COUNT', PAGE);
      for (const [entryId, fields] of entries)
        if (fields.some((field: string) => input.ids.some((id) => field.includes(id)))) matching.push(entryId);
      if (entries.length < PAGE) break;
      start = `(${entries.at(-1)?.[0] ?? ''}`;
    }
    for (let index = 0; index < matching.length; index += PAGE)
      deleted += await redis.xdel(stream, ...matching.slice(index, index + PAGE));
  }
  return deleted;
}
