import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../../src/app/embedded/embedded-postgres';
import { startEmbeddedRedis } from '../../../src/app/embedded/embedded-redis';
import { buildWebIfStale } from '../../../scripts/build-web';
import { makeServiceTempDir } from '../../../src/app/embedded/service-temp-dir';

/**
 * Once per browser run: a real Postgres and Redis in a temporary directory (their URLs reach the test workers
 * through the environment), and a current web/dist.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(chromium))
    throw new Error(`Chromium not found at ${chromium}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  await buildWebIfStale();
  const root = await makeServiceTempDir('chat-browser-');
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg') });
  const redis = await startEmbeddedRedis({ dataDir: path.join(root, 'redis'), persist: false });
  process.env.BROWSER_TEST_PG_ADMIN_URL = postgres.url;
  process.env.BROWSER_TEST_REDIS_URL = redis.url;
  return async () => {
    await redis.stop();
    await postgres.stop();
    await rm(root, { recursive: true, force: true });
  };
}
