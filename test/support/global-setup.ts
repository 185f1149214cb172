import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/app/embedded/embedded-postgres';
import { startEmbeddedRedis } from '../../src/app/embedded/embedded-redis';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the test Postgres server (database `postgres`). */
    pgAdminUrl: string;
    /** URL of the test Redis server. */
    redisUrl: string;
  }
}

/**
 * Starts one real Postgres and one real Redis for the whole integration run, in a temporary
 * directory, so tests never touch the data of `npm start`. Each test creates its own database
 * (test/support/databases.ts) and its own Redis key prefix.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = await makeServiceTempDir('chat-test-');
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg') });
  const redis = await startEmbeddedRedis({ dataDir: path.join(root, 'redis'), persist: false });
  project.provide('pgAdminUrl', postgres.url);
  project.provide('redisUrl', redis.url);
  return async () => {
    await redis.stop();
    await postgres.stop();
    await rm(root, { recursive: true, force: true });
  };
}
