import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../logger';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres';
import { startEmbeddedRedis, type EmbeddedRedis } from './embedded-redis';

/** The application database inside the embedded server. */
const APP_DATABASE = 'chat';

export interface ServiceUrls {
  databaseUrl: string;
  redisUrl: string;
  /** Stops what was started here (nothing when both URLs were given). */
  stop(): Promise<void>;
}

async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const existing = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (existing.rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Development default: when DATABASE_URL / REDIS_URL are not set, start a real Postgres and a real
 * redis-server with their data under `dataDir`. When they are set, nothing is started.
 */
export async function startEmbeddedServices(options: {
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  log: Logger;
}): Promise<ServiceUrls> {
  const { dataDir, log } = options;
  let postgres: EmbeddedPostgres | undefined;
  let redis: EmbeddedRedis | undefined;
  const stop = async (): Promise<void> => {
    if (redis) {
      await redis.stop();
      log.info('embedded redis stopped');
    }
    if (postgres) {
      await postgres.stop();
      log.info('embedded postgres stopped');
    }
  };
  try {
    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      postgres = await startEmbeddedPostgres({
        dataDir: path.join(dataDir, 'postgres'),
        log: (line) => log.debug({ service: 'postgres' }, line),
        announce: (line) => log.info({ service: 'postgres' }, line),
      });
      databaseUrl = await ensureDatabase(postgres.socketUrl, APP_DATABASE);
      // What a second `npm run serve` / `npm run worker` (or psql) sets to join: the application's database over
      // loopback TCP. (The embedded server's fixed local password is no secret: it listens on loopback only.)
      const joinUrl = new URL(postgres.url);
      joinUrl.pathname = `/${APP_DATABASE}`;
      log.info(
        { port: postgres.port, dataDir: path.join(dataDir, 'postgres') },
        `embedded postgres started; other processes join with DATABASE_URL=${joinUrl.toString()}`,
      );
    }
    let redisUrl = options.redisUrl;
    if (!redisUrl) {
      redis = await startEmbeddedRedis({ dataDir: path.join(dataDir, 'redis'), log: (message) => log.info(message) });
      redisUrl = redis.socketPath;
      log.info({ port: redis.port }, `embedded redis started; other processes join with REDIS_URL=${redis.url}`);
    }
    return { databaseUrl, redisUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
