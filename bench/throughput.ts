import { fork } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { TOKEN_COUNT_CACHE_BOUNDS, tokenCountCacheSize } from '../src/core/context';
import type { LoadResult } from './load-generator';
import { requestJson } from './support/sse-client';
import { startApp, type BenchApp, type Services } from './support/stack';
import { distribution, type Distribution } from './support/stats';

export interface ThroughputResult {
  threads: number;
  /** The server's event-loop delay over the run (this process: the app's), ms. */
  eventLoopDelay: { p50: number; p99: number; max: number };
  seconds: number;
  turns: number;
  turnsPerSecond: number;
  latency: Distribution;
  failures: number;
  /** This process' CPU time (user + system: the server's alone, the stub and clients are a child process) ÷ turns. */
  cpuMsPerTurn: number;
}

/** The offered load of the event-loop figure (issue 37 item 5). */
export const FIXED_LOAD_TURNS_PER_SECOND = 100;

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
   * Growth of the V8 heap in use outside compiled code per message stored through turns, once warm: the
   * least-squares slope over the settled points taken after each of `memoryRuns` runs (what a per-message leak
   * would show). Compiled code (V8's code and bytecode with their metadata) is left out because V8 keeps
   * optimizing, deoptimizing and flushing it for thousands of turns (0.4–0.9 MB between two points 2,700 messages
   * apart in heap snapshots here), whatever is stored; it is printed beside (`codeMb`, `kbPerMessageWithCode`).
   * RSS moves by ±100 MB between runs with the allocator's arenas, whatever is stored: printed, not judged.
   */
  kbPerMessage: number;
  /** Twice the slope's standard error: how far the points scatter around the line, in the same unit. */
  kbPerMessageSpread: number;
  /** The same slope over the whole heap in use, compiled code included. */
  kbPerMessageWithCode: number;
  /** Each run's own growth per message (outside compiled code), between consecutive points. */
  kbPerMessageByRun: number[];
  /** The settled points: messages stored through turns since the first, heap in use and compiled code in it (MB). */
  points: { messages: number; heapMb: number; codeMb: number }[];
  /** V8 heap in use at the settled points: after the throughput run, at the first memory point, at the last. */
  heapUsedMb: [number, number, number];
  /** Compiled code and bytecode with their metadata at the first and the last memory point (part of the heap). */
  codeMb: [number, number];
  /** The shared token-count cache at the first memory point, against its bound: full means warm. */
  tokenCache: { entries: number; maxEntries: number; chars: number; maxChars: number };
  /** Warm-up runs added before the first memory point to fill that cache. */
  extraWarmupRuns: number;
}

interface HeapPoint {
  heapMb: number;
  codeMb: number;
  rssMb: number;
}

const gc = (globalThis as { gc?: () => void }).gc;
/** Runs added before the first memory point at most, while the token-count cache is not full yet. */
const MAX_EXTRA_WARMUP_RUNS = 3;

/**
 * The server's memory once it has nothing in flight: no thread's queue draining (a turn running or its lease being
 * released: the runner's activeCount drops before the release's round trip), no fold or tool job queued or active, no
 * HTTP connection open (the load generator closes its own and the stub's idle keep-alive connections after each
 * run), twice in a row 100 ms apart. Then a full GC several times with macrotasks in between (finalizers, weak
 * callbacks and promise jobs that only run after a GC can free more at the next one), the same number each time.
 * Measured: read right after a run ends, the heap held up to 95 turns still finishing in the server and the last
 * request of each keep-alive connection, 3-5 MB that the next point may or may not carry; read once activeCount
 * was 0 and no connection was open, still 156 drains releasing their leases and the SSE routes waiting on them
 * (+3.7 MB that was gone a second later).
 */
async function settledMemory(app: BenchApp): Promise<HeapPoint> {
  const { runner, queues, server } = app.application;
  const busy = async (): Promise<boolean> => {
    const connections = await new Promise<number>((resolve) =>
      server.getConnections((error, count) => resolve(error ? 0 : count)),
    );
    const jobs = (await queues.counts()).reduce((sum, queue) => sum + queue.waiting + queue.active, 0);
    return runner.drainingCount > 0 || connections > 0 || jobs > 0;
  };
  const deadline = Date.now() + 30_000;
  let quiet = 0;
  while (quiet < 2 && Date.now() < deadline) {
    quiet = (await busy()) ? 0 : quiet + 1;
    await sleep(100);
  }
  if (quiet < 2) throw new Error('the server did not settle within 30 s of a run');
  if (!gc) throw new Error('the memory figures need node --expose-gc');
  for (let round = 0; round < 4; round += 1) {
    gc();
    await sleep(10);
    await new Promise((resolve) => setImmediate(resolve));
  }
  gc();
  const usage = process.memoryUsage();
  // Compiled code and bytecode with their metadata (deoptimization data, relocation info, feedback, source
  // positions): much of it lives in old space, not in V8's code space.
  const code = v8.getHeapCodeStatistics();
  const compiled = code.code_and_metadata_size + code.bytecode_and_metadata_size;
  return { heapMb: usage.heapUsed / 2 ** 20, codeMb: compiled / 2 ** 20, rssMb: usage.rss / 2 ** 20 };
}

interface LoadGenerator {
  stubUrl: string;
  run(input: {
    baseUrl: string;
    token: string;
    threadIds: string[];
    tokens?: string[];
    seconds: number;
    turnsPerSecond?: number;
  }): Promise<ThroughputResult>;
  stop(): void;
}

/** Forks bench/load-generator.ts (the stub and the clients) and waits for its stub to listen. */
async function startLoadGenerator(): Promise<LoadGenerator> {
  const child = fork(path.join(import.meta.dirname, 'load-generator.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const stubUrl = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { type: string; url: string }) => resolve(message.url));
    child.once('exit', (code) => reject(new Error(`the load generator exited with ${code}`)));
  });
  return {
    stubUrl,
    run: (input) =>
      new Promise((resolve) => {
        const cpuBefore = process.cpuUsage();
        // The app runs in this process: its event loop's delay is this one's (10 ms resolution, as prom-client's).
        const delay = monitorEventLoopDelay({ resolution: 10 });
        delay.enable();
        child.once('message', (result: LoadResult) => {
          const cpu = process.cpuUsage(cpuBefore);
          delay.disable();
          resolve({
            threads: input.threadIds.length,
            eventLoopDelay: {
              p50: delay.percentile(50) / 1e6,
              p99: delay.percentile(99) / 1e6,
              max: delay.max / 1e6,
            },
            seconds: result.seconds,
            turns: result.turns,
            turnsPerSecond: result.turns / result.seconds,
            latency: distribution(result.latencies),
            failures: result.failures,
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
 * clients in a child process (all on the same machine), with the server's CPU per turn there and at one turn in flight.
 * Then memory: RSS and the settled heap after the throughput run and after `seedMessages` more stored with SQL (resident
 * memory must not depend on what is stored); then, once the token-count cache is full, a settled heap point after each
 * of `memoryRuns` runs of `memorySeconds`, and the heap's growth per message as the slope through them.
 */
export async function measureThroughputAndMemory(
  services: Services,
  options: {
    threads: number;
    seconds: number;
    oneInFlightSeconds: number;
    seedMessages: number;
    memoryRuns: number;
    memorySeconds: number;
  },
): Promise<{
  throughput: ThroughputResult;
  /** The same load from as many users, one busy chat each. */
  spreadOverUsers: ThroughputResult;
  oneInFlight: ThroughputResult;
  fixedLoad: ThroughputResult;
  memory: MemoryResult;
}> {
  const load = await startLoadGenerator();
  const app = await startApp(services, {
    env: { OPENAI_BASE_URL: load.stubUrl, OPENAI_API_KEY: 'bench-key', CHAT_MODEL: 'gpt-4o-mini' },
  });
  try {
    const { body: guest } = await requestJson<{ token: string }>({
      baseUrl: app.baseUrl,
      method: 'POST',
      path: '/api/auth/guest',
    });
    const threadIds: string[] = [];
    for (let index = 0; index < options.threads; index += 1) {
      const { body } = await requestJson<{ id: string }>({
        baseUrl: app.baseUrl,
        method: 'POST',
        path: '/api/threads',
        token: guest.token,
        body: { title: `busy ${index}` },
      });
      threadIds.push(body.id);
    }
    const input = { baseUrl: app.baseUrl, token: guest.token, threadIds };
    await load.run({ ...input, seconds: Math.min(5, options.seconds) });
    // One turn at a time (one thread): the server's CPU per turn without the concurrency.
    const oneInFlight = await load.run({
      ...input,
      threadIds: threadIds.slice(0, 1),
      seconds: options.oneInFlightSeconds,
    });
    const throughput = await load.run({ ...input, seconds: options.seconds });
    // The same load from as many users with one chat each: issue 37's workload is one user whose 200 chats say the
    // same sentence, so every turn's cross-thread recall ranks ~800 equal matches; here it has no other chat.
    const users = await usersWithOneChat(app.baseUrl, options.threads);
    await load.run({ baseUrl: app.baseUrl, token: '', ...users, seconds: Math.min(5, options.seconds) });
    const spreadOverUsers = await load.run({ baseUrl: app.baseUrl, token: '', ...users, seconds: options.seconds });
    // A fixed offered load, below what the server sustains: its event loop's delay then shows synchronous hot spots
    // (a busy run's delay is mostly the queue of ready work).
    const fixedLoad = await load.run({
      ...input,
      seconds: options.seconds,
      turnsPerSecond: FIXED_LOAD_TURNS_PER_SECOND,
    });
    const before = await settledMemory(app);
    await seedMessages(app.databaseUrl, threadIds, options.seedMessages);
    await load.run({ ...input, seconds: options.seconds });
    const afterSeed = await settledMemory(app);
    // Warm means the bounded caches are full: the token-count cache takes one new text per turn here (each user
    // message differs), so until it holds its 4,096 texts every turn adds an entry (~150 B) that a leak check
    // must not count. Earlier runs fill it on a quiet machine; on a slow one a few more runs do, or the figure's
    // note says how full it was.
    let extraWarmupRuns = 0;
    const cacheFull = () =>
      tokenCountCacheSize().entries >= TOKEN_COUNT_CACHE_BOUNDS.maxEntries ||
      tokenCountCacheSize().chars >= TOKEN_COUNT_CACHE_BOUNDS.maxChars * 0.95;
    while (!cacheFull() && extraWarmupRuns < MAX_EXTRA_WARMUP_RUNS) {
      await load.run({ ...input, seconds: options.memorySeconds });
      extraWarmupRuns += 1;
    }
    const tokenCache = {
      ...tokenCountCacheSize(),
      maxEntries: TOKEN_COUNT_CACHE_BOUNDS.maxEntries,
      maxChars: TOKEN_COUNT_CACHE_BOUNDS.maxChars,
    };
    const first = await settledMemory(app);
    // One point after each run, the slope through all of them: a single run's difference is at the mercy of what
    // the point before it held.
    const points: { messages: number; memory: HeapPoint }[] = [{ messages: 0, memory: first }];
    for (let run = 0; run < options.memoryRuns; run += 1) {
      const { turns } = await load.run({ ...input, seconds: options.memorySeconds });
      points.push({ messages: (points.at(-1)?.messages ?? 0) + turns * 2, memory: await settledMemory(app) });
    }
    const last = points.at(-1)!.memory;
    const outsideCode = (memory: HeapPoint) => memory.heapMb - memory.codeMb;
    const fit = slope(points.map((point) => [point.messages, outsideCode(point.memory) * 1024]));
    return {
      throughput,
      spreadOverUsers,
      oneInFlight,
      fixedLoad,
      memory: {
        rssBeforeMb: before.rssMb,
        rssAfterSeedMb: afterSeed.rssMb,
        rssAfterMb: last.rssMb,
        storedMessages: points.at(-1)?.messages ?? 0,
        seededMessages: options.seedMessages,
        memoryRuns: options.memoryRuns,
        kbPerMessage: fit.slope,
        kbPerMessageSpread: 2 * fit.standardError,
        kbPerMessageWithCode: slope(points.map((point) => [point.messages, point.memory.heapMb * 1024])).slope,
        kbPerMessageByRun: points
          .slice(1)
          .map(
            (point, index) =>
              ((outsideCode(point.memory) - outsideCode(points[index]!.memory)) * 1024) /
              Math.max(1, point.messages - points[index]!.messages),
          ),
        points: points.map((point) => ({
          messages: point.messages,
          heapMb: point.memory.heapMb,
          codeMb: point.memory.codeMb,
        })),
        heapUsedMb: [before.heapMb, first.heapMb, last.heapMb],
        codeMb: [first.codeMb, last.codeMb],
        tokenCache,
        extraWarmupRuns,
      },
    };
  } finally {
    await app.stop();
    load.stop();
  }
}

/** `count` guests signed in, each with one chat: their tokens and chats, in the same order. */
async function usersWithOneChat(baseUrl: string, count: number): Promise<{ tokens: string[]; threadIds: string[] }> {
  const tokens: string[] = [];
  const threadIds: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const { body: guest } = await requestJson<{ token: string }>({ baseUrl, method: 'POST', path: '/api/auth/guest' });
    const { body: thread } = await requestJson<{ id: string }>({
      baseUrl,
      method: 'POST',
      path: '/api/threads',
      token: guest.token,
      body: { title: `user ${index}` },
    });
    tokens.push(guest.token);
    threadIds.push(thread.id);
  }
  return { tokens, threadIds };
}

/** The least-squares slope of y over x, with its standard error (0 for fewer than three points). */
function slope(points: [number, number][]): { slope: number; standardError: number } {
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  if (variance === 0) return { slope: 0, standardError: 0 };
  const fitted = covariance / variance;
  const residuals = points.reduce((sum, [x, y]) => sum + (y - meanY - fitted * (x - meanX)) ** 2, 0);
  const standardError = points.length > 2 ? Math.sqrt(residuals / (points.length - 2) / variance) : 0;
  return { slope: fitted, standardError };
}

/** Older history for the busy threads: `count` messages spread over them, stored below their current seqs. */
async function seedMessages(databaseUrl: string, threadIds: string[], count: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const perThread = Math.ceil(count / threadIds.length);
    await client.query(
      `
      INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, updated_at)
      SELECT gen_random_uuid(), t.id, -g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
        'Archived message ' || g || ' about the rollout and its checks.', 'complete', 14, 'o200k_base', now()
      FROM unnest($1::uuid[]) t(id), generate_series(1, $2::int) g`,
      [threadIds, perThread],
    );
  } finally {
    await client.end();
  }
}
