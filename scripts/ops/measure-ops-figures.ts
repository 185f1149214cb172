/**
 * Figures for docs/scaling.md, measured on this machine: Postgres statements/commits/rows per turn, Redis commands
 * per turn (turn + fold share), turn throughput through the whole app with a zero-latency model stub, and memory
 * per idle socket. Run: node --import tsx scripts/ops/measure-ops-figures.ts  (prints one JSON object)
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { io as connect } from 'socket.io-client';
import { loadEnv } from '../../src/config/env';
import { createApplication } from '../../src/app/compose';
import { createLogger } from '../../src/app/logger';
import { startEmbeddedPostgres } from '../../src/app/embedded/embedded-postgres';
import { startEmbeddedRedis } from '../../src/app/embedded/embedded-redis';
import { applyMigrations } from '../../src/db/migrate';
import { startOpenAIStub } from '../../test/support/openai-stub';
import { classifyRequest, summaryResponder } from '../../test/support/summary-stub';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';

const TURNS = Number(process.env.TURNS ?? 200);
const THREADS = Number(process.env.THREADS ?? 20);
const SOCKETS = Number(process.env.SOCKETS ?? 500);

async function main(): Promise<void> {
  const root = await makeServiceTempDir('ops-figures-');
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg') });
  const redis = await startEmbeddedRedis({ dataDir: path.join(root, 'redis'), persist: false });
  const stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder() });
  const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
  await applyMigrations({
    databaseUrl: postgres.url,
    migrationsDir: path.resolve(import.meta.dirname, '../../prisma/migrations'),
    log: silent,
  });
  const env = loadEnv({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: postgres.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: 'ops',
    HOST: '127.0.0.1',
    OPENAI_BASE_URL: stub.url,
    RATE_LIMIT_PER_MINUTE: '1000000',
    TOOL_ROUNDS_PER_MINUTE: '1000000',
    BACKGROUND_RESPONSES_PER_USER: '1000000',
    API_REQUESTS_PER_MINUTE: '1000000',
    // Spend limits (issue 35) would cap the figures at an allowance: off, whatever the environment says.
    SPEND_LIMITS: 'off',
    MAX_SOCKETS_PER_USER: '100000',
    SOCKET_EVENTS_PER_MINUTE: '100000000',
    MAX_THREADS_PER_USER: '1000000',
    SUMMARY_TRIGGER: 'messages=12',
    SUMMARY_KEEP: 'messages=6',
    MAX_QUEUED_TURNS: '1000',
  });
  // The app reaches them over their unix sockets, as npm start does with its embedded services.
  const application = await createApplication({
    env,
    databaseUrl: postgres.socketUrl,
    redisUrl: redis.socketPath,
    authSecret: randomBytes(32).toString('hex'),
    adminToken: randomBytes(16).toString('hex'),
    log: createLogger({ level: 'silent', pretty: false }),
    mode: 'all',
    tuning: { defaultMetrics: false, sweepIntervalMs: 3_600_000 },
  });
  const port = await application.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  const post = async (pathName: string, token: string | null, body: unknown) =>
    (
      await fetch(`${base}${pathName}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      })
    ).json() as Promise<Record<string, unknown>>;

  const { token } = (await post('/api/auth/guest', null, {})) as { token: string };
  const threads = await Promise.all(
    Array.from({ length: THREADS }, async () => ((await post('/api/threads', token, {})) as { id: string }).id),
  );

  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  const redisClient = new Redis(redis.url);
  const pgStats = async () =>
    (
      await db.query<{ xact_commit: string; tup_inserted: string; tup_updated: string; tup_deleted: string }>(
        'SELECT xact_commit, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = current_database()',
      )
    ).rows[0]!;
  const redisCommands = async () => Number(/total_commands_processed:(\d+)/.exec(await redisClient.info('stats'))![1]);

  await db.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
  const before = await pgStats();
  const redisBefore = await redisCommands();
  const started = performance.now();
  // TURNS turns spread over THREADS threads; each thread's turns one after the other (that is how a user chats).
  const latencies: number[] = [];
  await Promise.all(
    threads.map(async (threadId, index) => {
      for (let turn = index; turn < TURNS; turn += THREADS) {
        const sent = performance.now();
        await post(`/api/threads/${threadId}/messages`, token, { content: `message ${turn} with CODE-${turn}` });
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  // Let the folds the turns triggered finish, then read the counters.
  for (let waited = 0; waited < 30_000; waited += 250) {
    const counts = await application.folds.queue.getJobCounts('waiting', 'active', 'delayed');
    if ((counts.waiting ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await db.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
  const after = await pgStats();
  const redisAfter = await redisCommands();
  const folds = Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM summary_revisions')).rows[0]!.n);
  latencies.sort((a, b) => a - b);

  // Idle sockets: heap growth per connection with client and server in this one process (an upper bound of the
  // server's share).
  global.gc?.();
  const memoryBefore = process.memoryUsage();
  const sockets = [];
  for (let index = 0; index < SOCKETS; index += 1) {
    const socket = connect(base, { auth: { token }, transports: ['websocket'], reconnection: false, forceNew: true });
    sockets.push(
      new Promise<typeof socket>((resolve, reject) => {
        socket.once('connect', () => resolve(socket));
        socket.once('connect_error', reject);
      }),
    );
  }
  const open = await Promise.all(sockets);
  global.gc?.();
  const memoryAfter = process.memoryUsage();
  const connected = application.io?.connectedSockets ?? 0;
  for (const socket of open) socket.disconnect();

  const figures = {
    turns: TURNS,
    threads: THREADS,
    folds,
    seconds: Number(elapsed.toFixed(2)),
    turnsPerSecond: Number((TURNS / elapsed).toFixed(1)),
    turnLatencyMs: {
      p50: Math.round(latencies[Math.floor(latencies.length * 0.5)]!),
      p95: Math.round(latencies[Math.floor(latencies.length * 0.95)]!),
    },
    postgresPerTurn: {
      commits: Number(((Number(after.xact_commit) - Number(before.xact_commit)) / TURNS).toFixed(1)),
      rowsInserted: Number(((Number(after.tup_inserted) - Number(before.tup_inserted)) / TURNS).toFixed(1)),
      rowsUpdated: Number(((Number(after.tup_updated) - Number(before.tup_updated)) / TURNS).toFixed(1)),
      rowsDeleted: Number(((Number(after.tup_deleted) - Number(before.tup_deleted)) / TURNS).toFixed(1)),
    },
    redisCommandsPerTurn: Number(((redisAfter - redisBefore) / TURNS).toFixed(1)),
    sockets: {
      opened: SOCKETS,
      connected,
      heapPerSocketKiB: Math.round((memoryAfter.heapUsed - memoryBefore.heapUsed) / SOCKETS / 1024),
    },
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);

  redisClient.disconnect();
  await db.end();
  await application.stop(1000);
  await stub.close();
  await redis.stop();
  await postgres.stop();
  await rm(root, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exit(1);
  },
);
