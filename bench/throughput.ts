import pg from 'pg';
import { startBenchStack, type BenchStack } from './support/bench-stack';
import type { Services } from './support/stack';
import { distribution, type Distribution } from './support/stats';

export interface ThroughputResult {
  threads: number;
  seconds: number;
  turns: number;
  turnsPerSecond: number;
  latency: Distribution;
  failures: number;
}

export interface MemoryResult {
  rssBeforeMb: number;
  rssAfterMb: number;
  storedMessages: number;
  seededMessages: number;
  kbPerMessage: number;
}

function rssMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss / 2 ** 20;
}

/** `threads` users' threads busy at once, each sending its next message as soon as its turn ends, for `seconds`. */
async function busyThreads(stack: BenchStack, threadIds: string[], token: string, seconds: number): Promise<ThroughputResult> {
  const latencies: number[] = [];
  let failures = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(threadIds.map(async (threadId) => {
    while (performance.now() < deadline) {
      try {
        latencies.push((await stack.probe.turn({ token, threadId })).total);
      } catch {
        failures += 1;
      }
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  return { threads: threadIds.length, seconds: elapsed, turns: latencies.length, turnsPerSecond: latencies.length / elapsed, latency: distribution(latencies), failures };
}

/**
 * Sustained turns per second with `threads` threads busy at once (client, server, stub, Postgres and Redis on the
 * same machine), then memory: the process' RSS before and after storing more messages through turns and after
 * seeding `seedMessages` more with SQL (resident memory must not depend on what is stored).
 */
export async function measureThroughputAndMemory(services: Services, options: { threads: number; seconds: number; seedMessages: number }): Promise<{ throughput: ThroughputResult; memory: MemoryResult }> {
  const stack = await startBenchStack(services);
  try {
    const token = await stack.probe.guest();
    const threadIds: string[] = [];
    for (let index = 0; index < options.threads; index += 1) threadIds.push(await stack.probe.thread(token, `busy ${index}`));
    await busyThreads(stack, threadIds, token, Math.min(5, options.seconds));
    const throughput = await busyThreads(stack, threadIds, token, options.seconds);
    const rssBeforeMb = rssMb();
    await seedMessages(stack.app.databaseUrl, threadIds, options.seedMessages);
    const again = await busyThreads(stack, threadIds, token, options.seconds);
    const rssAfterMb = rssMb();
    const storedMessages = again.turns * 2 + options.seedMessages;
    return {
      throughput,
      memory: { rssBeforeMb, rssAfterMb, storedMessages: again.turns * 2, seededMessages: options.seedMessages, kbPerMessage: ((rssAfterMb - rssBeforeMb) * 1024) / storedMessages },
    };
  } finally {
    await stack.stop();
  }
}

/** Older history for the busy threads: `count` messages spread over them, stored below their current seqs. */
async function seedMessages(databaseUrl: string, threadIds: string[], count: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const perThread = Math.ceil(count / threadIds.length);
    await client.query(`
      INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, updated_at)
      SELECT gen_random_uuid(), t.id, -g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
        'Archived message ' || g || ' about the rollout and its checks.', 'complete', 14, 'o200k_base', now()
      FROM unnest($1::uuid[]) t(id), generate_series(1, $2::int) g`, [threadIds, perThread]);
  } finally {
    await client.end();
  }
}
