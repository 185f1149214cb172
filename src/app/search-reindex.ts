/**
 * `npm run search:reindex`: rebuilds the full-text search index of every message with SEARCH_LANGUAGE (needed after
 * changing it). Uses DATABASE_URL, or the embedded Postgres under DATA_DIR like `npm start`; safe while servers run.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadEnv } from '../config/env';
import { applyMigrations } from '../db/migrate';
import { createDatabase } from '../db/prisma-client';
import { reindexSearch } from '../db/search-settings';
import { startEmbeddedServices } from './embedded/start-embedded-services';
import { createLogger, secretsOfEnv } from './logger';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function main(): Promise<void> {
  const env = loadEnv();
  const log = createLogger({ level: env.LOG_LEVEL, name: 'search-reindex', secrets: secretsOfEnv(env) });
  // Only Postgres is needed: a Redis URL is passed so none is started.
  const services = await startEmbeddedServices({
    dataDir: env.DATA_DIR,
    log,
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
  });
  const db = createDatabase({ url: services.databaseUrl, poolSize: 2 });
  try {
    await applyMigrations({
      databaseUrl: services.databaseUrl,
      migrationsDir: path.join(ROOT, 'prisma/migrations'),
      log,
    });
    const count = await reindexSearch(db, env.SEARCH_LANGUAGE, log);
    log.info({ messages: count, language: env.SEARCH_LANGUAGE }, 'search index rebuilt');
  } finally {
    await db.$disconnect();
    await services.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigError ? 'Configuration error' : 'Reindex failed'}: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
