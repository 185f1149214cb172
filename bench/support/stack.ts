import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { createApplication, type Application, type ApplicationOptions } from '../../src/app/compose';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/app/embedded/embedded-postgres';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/app/embedded/embedded-redis';
import { createLogger } from '../../src/app/logger';
import { loadEnv } from '../../src/config/env';
import { applyMigrations } from '../../src/db/migrate';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';

const ROOT = path.resolve(import.meta.dirname, '../..');
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

/** One embedded Postgres and one embedded Redis for the whole benchmark run, in a temporary directory. */
export interface Services {
  postgres: EmbeddedPostgres;
  redis: EmbeddedRedis;
  /** A fresh migrated database on the embedded server. */
  createDatabase(prefix: string): Promise<string>;
  stop(): Promise<void>;
}

/** Only an embedded Postgres (benchmarks that need no Redis), in a temporary directory. */
export type PostgresServices = Omit<Services, 'redis'>;

/** A fresh database named `prefix_<random>` on `serverUrl`, migrated. */
async function createMigratedDatabase(serverUrl: string, prefix: string): Promise<string> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await applyMigrations({
    databaseUrl: url.toString(),
    migrationsDir: path.join(ROOT, 'prisma/migrations'),
    log: silent,
  });
  return url.toString();
}

export async function startPostgres(): Promise<PostgresServices> {
  const root = await makeServiceTempDir('chat-bench-');
  try {
    const postgres = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg') });
    return {
      postgres,
      createDatabase: (prefix) => createMigratedDatabase(postgres.socketUrl, prefix),
      async stop() {
        await postgres.stop();
        await rm(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}

export async function startServices(): Promise<Services> {
  const root = await makeServiceTempDir('chat-bench-');
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg') });
  let redis: EmbeddedRedis;
  try {
    redis = await startEmbeddedRedis({ dataDir: path.join(root, 'redis'), persist: false });
  } catch (error) {
    await postgres.stop();
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return {
    postgres,
    redis,
    createDatabase: (prefix) => createMigratedDatabase(postgres.socketUrl, prefix),
    async stop() {
      await redis.stop();
      await postgres.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * Stops what `stop` stops when the process is told to end (Ctrl-C, SIGTERM, a closed terminal), then exits with
 * 128 + the signal's number. The services run in their own process groups, so nothing else would stop them.
 * Returns a function that removes the handlers.
 */
export function stopOnSignals(stop: () => Promise<void>, log: (message: string) => void): () => void {
  const codes: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
  const handlers = Object.entries(codes).map(([signal, code]) => {
    const handler = (): void => {
      log(`${signal}: stopping the services this run started`);
      stop()
        .catch((error: unknown) => log(`stopping failed: ${String(error)}`))
        .finally(() => process.exit(code));
    };
    process.once(signal, handler);
    return () => process.removeListener(signal, handler);
  });
  return () => handlers.forEach((remove) => remove());
}

export interface BenchApp {
  application: Application;
  baseUrl: string;
  port: number;
  databaseUrl: string;
  stop(): Promise<void>;
}

/**
 * The whole application (API + fold worker + sweeper), in this process, on a fresh database, reaching Postgres and
 * Redis over their unix sockets as `npm start` does with its embedded services.
 */
export async function startApp(
  services: Services,
  options: { env: Record<string, string>; tuning?: ApplicationOptions['tuning'] },
): Promise<BenchApp> {
  const databaseUrl = await services.createDatabase('bench');
  const env = loadEnv({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    REDIS_PREFIX: `b${randomBytes(4).toString('hex')}`,
    DATABASE_URL: databaseUrl,
    REDIS_URL: services.redis.url,
    HOST: '127.0.0.1',
    // No title calls: the figures are the chat's and the summary's.
    CHAT_TITLES: 'words',
    // A benchmark is one user at many times a user's share (1,000 tabs on one thread, 200 busy threads): the
    // per-user abuse limits would measure themselves, not the server.
    RATE_LIMIT_PER_MINUTE: '100000000',
    TOOL_ROUNDS_PER_MINUTE: '100000000',
    BACKGROUND_RESPONSES_PER_USER: '100000000',
    API_REQUESTS_PER_MINUTE: '100000000',
    // Spend limits (issue 35) would cap the figures at an allowance: off, whatever the environment says.
    SPEND_LIMITS: 'off',
    EXPORTS_PER_MINUTE: '100000000',
    MAX_QUEUED_TURNS: '50',
    MAX_SOCKETS_PER_USER: '100000',
    SOCKET_EVENTS_PER_MINUTE: '100000000',
    SEARCH_PER_MINUTE: '100000000',
    MAX_THREADS_PER_USER: '1000000',
    // The throughput run's second load signs 200 guests in from one address.
    GUEST_RATE_LIMIT_PER_MINUTE: '100000000',
    ...options.env,
  });
  const log = createLogger({ level: env.LOG_LEVEL, pretty: false });
  const application = await createApplication({
    env,
    databaseUrl,
    redisUrl: services.redis.socketPath,
    authSecret: randomBytes(32).toString('hex'),
    adminToken: 'bench-admin-token-0123456789',
    log,
    mode: 'all',
    tuning: { sweepIntervalMs: 60_000, ...options.tuning },
  });
  const port = await application.listen(0, '127.0.0.1');
  return { application, port, baseUrl: `http://127.0.0.1:${port}`, databaseUrl, stop: () => application.stop(2000) };
}
