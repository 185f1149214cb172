import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { applyMigrations } from '../../src/db/migrate';
import { startEmbeddedPostgres } from '../../src/app/embedded/embedded-postgres';
import { startEmbeddedRedis } from '../../src/app/embedded/embedded-redis';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the test Postgres server (database `postgres`). */
    pgAdminUrl: string;
    /** URL of the test Redis server. */
    redisUrl: string;
    /** A database migrated once per run, cloned by `createTestDatabase({ migrated: true })`. */
    pgMigratedTemplate: string;
  }
}

const MIGRATED_TEMPLATE = 'template_migrated';
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

/** Creates the template database and applies every migration to it (once per run). */
async function migrateTemplate(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${MIGRATED_TEMPLATE}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${MIGRATED_TEMPLATE}`;
  // applyMigrations closes its connection: a template must have none when it is cloned.
  await applyMigrations({
    databaseUrl: url.toString(),
    migrationsDir: path.resolve(import.meta.dirname, '../../prisma/migrations'),
    log: silent,
  });
}

/**
 * Starts one real Postgres and one real Redis for the whole integration run, in a temporary
 * directory, so tests never touch the data of `npm start`. Each test creates its own database
 * (test/support/databases.ts) and its own Redis key prefix. The migrations run once, into a template database
 * each test app clones (CREATE DATABASE ... TEMPLATE: ~0.2 s instead of ~0.7-1 s of migrating on a busy machine).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = await makeServiceTempDir('chat-test-');
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg') });
  const redis = await startEmbeddedRedis({ dataDir: path.join(root, 'redis'), persist: false });
  project.provide('pgAdminUrl', postgres.url);
  project.provide('redisUrl', redis.url);
  await migrateTemplate(postgres.url);
  project.provide('pgMigratedTemplate', MIGRATED_TEMPLATE);
  return async () => {
    await redis.stop();
    await postgres.stop();
    await rm(root, { recursive: true, force: true });
  };
}
