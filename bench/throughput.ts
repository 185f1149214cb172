import { fork } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import type { LoadResult } from './load-generator';
import { requestJson } from './support/sse-client';
import { startApp, type Services } from './support/stack';
import { distribution, type Distribution } from './support/stats';

export interface ThroughputResult {
  threads: number;
  seconds: number;
  turns: number;
  turnsPerSecond: number;
  latency: Distribution;
  failures: number;
  /** This process' CPU time (user + system: the server's alone, the stub and clients are a child process) ÷ turns. */
  cpuMsPerTurn: number;
}

export interface MemoryResult {
  /** After the throughput run. */
  rssBeforeMb: number;
  /** After `seededMessages` were stored with SQL and another run of turns on those threads. */
  rssAfterSeedMb: number;
  /** After `memoryRuns` more runs of turns (`storedMessages` messages through the app). */
  rssAfterMb: number;
  storedMessages: number;
  memoryRuns: number;
  seededMessages: number;
  /**
   * Growth of the heap in use after GC per message stored by the last run, once warm: what a per-message leak
   * would show. (RSS moves by ±100 MB between runs with the allocator's arenas, whatever is stored.)
   */
  kbPerMessage: number;
  /** Each of those runs' own growth per message: how much the heap after GC moves between runs either way. */
  kbPerMessageByRun: number[];
  /** V8 heap in use after a full GC at the same three points (what a leak would grow). */
  heapUsedMb: [number, number, number];
}

const heapUsed: number[] = [];

/** RSS after a full GC (with --expose-gc); records the heap in use at the same moment. */
function rssMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  heapUsed.push(usage.heapUsed / 2 ** 20);
  return usage.rss / 2 ** 20;
}

interface LoadGenerator {
  stubUrl: string;
  run(input: { baseUrl: string; token: string; threadIds: string[]; seconds: number }): Promise<ThroughputResult>;
  stop(): void;
}

/** Forks bench/load-generator.ts (the stub and the clients) and waits for its stub to listen. */
async function startLoadGenerator(): Promise<LoadGenerator> {
  const child = fork(path.join(import.meta.dirname, 'load-generator.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const stubUrl = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { type: string; url: string }) => resolve(message.url));
    child.once('exit', (code) => reject(new Error(`the load generator exited with ${code}`)));
  });
  return {
    stubUrl,
    run: (input) => new Promise((resolve) => {
      const cpuBefore = process.cpuUsage();
      child.once('message', (result: LoadResult) => {
        const cpu = process.cpuUsage(cpuBefore);
        resolve({
          threads: input.threadIds.length, seconds: result.seconds, turns: result.turns, turnsPerSecond: result.turns / result.seconds,
          latency: distribution(result.latencies), failures: result.failures,
          cpuMsPerTurn: (cpu.user + cpu.system) / 1000 / Math.max(1, result.turns),
        });
      });
      child.send({ type: 'load', ...input });
    }),
    stop: () => child.send({ type: 'exit' }),
  };
}

/**
 * Sustained turns per second with `threads` threads busy at once: the whole app in this process, the stub and the
 * clients in a child process (all on the same machine), with the server's CPU per turn there and at one turn in flight. Then memory: this process' RSS before and after storing
 * more messages through turns and `seedMessages` more with SQL (resident memory must not depend on what is stored).
 */
export async function measureThroughputAndMemory(services: Services, options: { threads: number; seconds: number; oneInFlightSeconds: number; seedMessages: number; memoryRuns: number }): Promise<{ throughput: ThroughputResult; oneInFlight: ThroughputResult; memory: MemoryResult }> {
  const load = await startLoadGenerator();
  const app = await startApp(services, { env: { OPENAI_BASE_URL: load.stubUrl, OPENAI_API_KEY: 'bench-key', CHAT_MODEL: 'gpt-4o-mini' } });
  try {
    const { body: guest } = await requestJson<{ token: string }>({ baseUrl: app.baseUrl, method: 'POST', path: '/api/auth/guest' });
    const threadIds: string[] = [];
    for (let index = 0; index < options.threads; index += 1) {
      const { body } = await requestJson<{ id: string }>({ baseUrl: app.baseUrl, method: 'POST', path: '/api/threads', token: guest.token, body: { title: `busy ${index}` } });
      threadIds.push(body.id);
    }
    const input = { baseUrl: app.baseUrl, token: guest.token, threadIds };
    await load.run({ ...input, seconds: Math.min(5, options.seconds) });
    // One turn at a time (one thread): the server's CPU per turn without the concurrency.
    const oneInFlight = await load.run({ ...input, threadIds: threadIds.slice(0, 1), seconds: options.oneInFlightSeconds });
    const throughput = await load.run({ ...input, seconds: options.seconds });
    const rssBeforeMb = rssMb();
    await seedMessages(app.databaseUrl, threadIds, options.seedMessages);
    await load.run({ ...input, seconds: options.seconds });
    const rssAfterSeedMb = rssMb();
    // The heap in use after a full GC moves by a few MB between two runs, in either direction (measured: +2.9,
    // -2.5, +0.1 MB over three runs of ~600 messages each), so one run's difference was mostly that noise (6.7 KB
    // per message in one quick run, -3.9 in another). The figure is the least-squares slope over several runs.
    const points: { messages: number; heapMb: number }[] = [{ messages: 0, heapMb: heapUsed.at(-1) ?? 0 }];
    let rssAfterMb = rssAfterSeedMb;
    for (let run = 0; run < options.memoryRuns; run += 1) {
      const { turns } = await load.run({ ...input, seconds: options.seconds });
      rssAfterMb = rssMb();
      points.push({ messages: (points.at(-1)?.messages ?? 0) + turns * 2, heapMb: heapUsed.at(-1) ?? 0 });
    }
    const storedMessages = points.at(-1)?.messages ?? 0;
    return {
      throughput,
      oneInFlight,
      memory: {
        rssBeforeMb, rssAfterSeedMb, rssAfterMb, storedMessages, seededMessages: options.seedMessages, memoryRuns: options.memoryRuns,
        kbPerMessage: slope(points.map((point) => [point.messages, point.heapMb * 1024])),
        kbPerMessageByRun: points.slice(1).map((point, index) => ((point.heapMb - points[index]!.heapMb) * 1024) / Math.max(1, point.messages - points[index]!.messages)),
        heapUsedMb: [heapUsed.at(-2 - options.memoryRuns) ?? 0, points[0]!.heapMb, heapUsed.at(-1) ?? 0],
      },
    };
  } finally {
    await app.stop();
    load.stop();
  }
}

/** The least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return variance === 0 ? 0 : covariance / variance;
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
