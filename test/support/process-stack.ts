import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { inject } from 'vitest';
import { makeServiceTempDir } from '../../src/app/embedded/service-temp-dir';
import { createMigratedTestDatabase } from './databases';

/** What the app's child processes of a multi-process test share (startServerProcess, startWorkerProcess). */
export interface ProcessStack {
  databaseUrl: string;
  dataDir: string;
  /**
   * The env of every process: a fresh migrated database, the test Redis under a prefix of its own, the model stub,
   * the data directory, fresh secrets, then the test's own settings.
   */
  env: Record<string, string>;
  /** Removes the data directory (once the processes are gone). */
  removeDataDir(): Promise<void>;
}

/**
 * The setup of a test that runs the app as child processes (serve, worker, all): its database (`name` as prefix),
 * data directory and env; `env` adds to or overrides the shared settings.
 */
export async function prepareProcessStack(options: {
  name: string;
  modelUrl: string;
  env?: Record<string, string>;
}): Promise<ProcessStack> {
  const database = await createMigratedTestDatabase(options.name);
  const dataDir = await makeServiceTempDir(`chat-${options.name.replace(/_/g, '-')}-`);
  return {
    databaseUrl: database.url,
    dataDir,
    env: {
      DATABASE_URL: database.url,
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: `t${randomBytes(5).toString('hex')}`,
      OPENAI_BASE_URL: options.modelUrl,
      DATA_DIR: dataDir,
      AUTH_SECRET: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: randomBytes(16).toString('hex'),
      ...options.env,
    },
    removeDataDir: () => rm(dataDir, { recursive: true, force: true }),
  };
}
