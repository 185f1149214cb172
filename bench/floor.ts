import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { distribution, type Distribution } from './support/stats';

/**
 * The floor: the minimum database and queue work of one turn done with raw `pg` and ioredis, no ORM, no HTTP,
 * no model: one insert (the message), one pack read (thread row + window entries in one statement), one enqueue
 * (an LPUSH). Turn overhead is compared with it, measured in the same run on the same servers.
 */
export async function measureFloor(options: {
  databaseUrl: string;
  redisUrl: string;
  iterations: number;
  inFlight: number;
}): Promise<Distribution> {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: Math.max(4, options.inFlight) });
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  const queueKey = `floor:${randomUUID()}`;
  try {
    const threadIds = await seedThreads(pool, options.inFlight);
    const samples: number[] = [];
    let seq = 100;
    const oneTurn = async (threadId: string): Promise<void> => {
      const started = performance.now();
      seq += 1;
      await pool.query(
        `INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, updated_at)
         VALUES ($1, $2, $3, 'user', $4, 'complete', 12, 'o200k_base', now())`,
        [randomUUID(), threadId, seq, `floor message ${seq}`],
      );
      await pool.query(
        `SELECT t.summary_text, t.summary_tokens, t.version, e.seq, e.role, e.content, e.tokens
         FROM threads t LEFT JOIN context_entries e ON e.thread_id = t.id AND e.seq > t.summary_covered_through_seq
         WHERE t.id = $1 ORDER BY e.seq`,
        [threadId],
      );
      await redis.lpush(queueKey, JSON.stringify({ threadId, seq }));
      samples.push(performance.now() - started);
    };
    const warmup = Math.min(50, options.iterations);
    const rounds = Math.ceil((options.iterations + warmup) / options.inFlight);
    for (let round = 0; round < rounds; round += 1) {
      await Promise.all(threadIds.map((threadId) => oneTurn(threadId)));
      if (round * options.inFlight < warmup) samples.length = 0;
    }
    return distribution(samples);
  } finally {
    await redis.del(queueKey);
    redis.disconnect();
    await pool.end();
  }
}

/** Threads with a 12-entry window, like a thread after its first fold. */
async function seedThreads(pool: pg.Pool, count: number): Promise<string[]> {
  const owner = `floor-${randomUUID()}`;
  await pool.query(`INSERT INTO users (id, kind) VALUES ($1, 'guest')`, [owner]);
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const id = randomUUID();
    ids.push(id);
    await pool.query(`INSERT INTO threads (id, owner_id, last_seq, updated_at) VALUES ($1, $2, 12, now())`, [
      id,
      owner,
    ]);
    await pool.query(
      `INSERT INTO context_entries (thread_id, seq, role, content, tokens, encoding)
       SELECT $1, g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, repeat('words of the window ', 10), 45, 'o200k_base'
       FROM generate_series(1, 12) g`,
      [id],
    );
  }
  return ids;
}
