import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { loadEnv } from '../../src/config/env';
import { createApplication, type Application, type ApplicationOptions, type ProcessMode } from '../../src/app/compose';
import { createLogger, type Logger } from '../../src/app/logger';
import { createTestDatabase } from './databases';

export interface TestApp {
  application: Application;
  baseUrl: string;
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  authSecret: string;
  /** A fetch against the app with JSON defaults and the given bearer token. */
  api(pathName: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
  /** A new guest and its token. */
  guest(): Promise<{ userId: string; token: string }>;
  stop(): Promise<void>;
}

/** A fetch against a server at `baseUrl` with JSON defaults and a bearer token (TestApp's `api`). */
export function apiClient(baseUrl: string): TestApp['api'] {
  return (pathName, init = {}) => {
    const headers = new Headers(init.headers);
    if (init.token) headers.set('Authorization', `Bearer ${init.token}`);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set('Content-Type', 'application/json');
      body = JSON.stringify(init.json);
    }
    return fetch(`${baseUrl}${pathName}`, { ...init, headers, body: body ?? null });
  };
}

/**
 * Starts the whole application in this process against a fresh migrated database on the test Postgres (a copy of
 * the run's migrated template) and the test Redis under its own key prefix. `env` overrides the environment (e.g.
 * OPENAI_BASE_URL of a stub).
 */
export async function startTestApp(
  options: {
    env?: Record<string, string>;
    mode?: ProcessMode;
    tuning?: ApplicationOptions['tuning'];
    database?: { url: string };
    authSecret?: string;
    log?: Logger;
  } = {},
): Promise<TestApp> {
  // A copy of the run's migrated template (global setup applied the migrations once).
  const database = options.database ?? (await createTestDatabase('app', { migrated: true }));
  const prefix = options.env?.REDIS_PREFIX ?? `t${randomBytes(5).toString('hex')}`;
  const redisUrl = options.env?.REDIS_URL ?? inject('redisUrl');
  const authSecret = options.authSecret ?? randomBytes(32).toString('hex');
  const env = loadEnv({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    REDIS_PREFIX: prefix,
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '10000',
    TOOL_ROUNDS_PER_MINUTE: '10000',
    BACKGROUND_RESPONSES_PER_USER: '10000',
    API_REQUESTS_PER_MINUTE: '100000',
    SEARCH_PER_MINUTE: '10000',
    // Titles from the first message's words: a title job's model call would interleave with the requests a test
    // scripts and counts on its stub (test/titles/chat-titles.int.test.ts turns the model's titles on).
    CHAT_TITLES: 'words',
    ...options.env,
  });
  const log = options.log ?? createLogger({ level: env.LOG_LEVEL, pretty: false });
  const application = await createApplication({
    env,
    databaseUrl: database.url,
    redisUrl,
    authSecret,
    adminToken: 'test-admin-token-0123456789',
    log,
    mode: options.mode ?? 'all',
    tuning: {
      sweepIntervalMs: 500,
      stalledIntervalMs: 1000,
      lockDurationMs: 2000,
      retryBaseMs: 20,
      leaseTtlMs: 5000,
      defaultMetrics: false,
      ...options.tuning,
    },
  });
  const port = await application.listen(0, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${port}`;
  const api = apiClient(baseUrl);
  return {
    application,
    baseUrl,
    databaseUrl: database.url,
    redisUrl,
    prefix,
    authSecret,
    api,
    async guest() {
      const response = await api('/api/auth/guest', { method: 'POST' });
      if (response.status !== 201) throw new Error(`guest sign-in failed: ${response.status} ${await response.text()}`);
      return (await response.json()) as { userId: string; token: string };
    },
    async stop() {
      await application.stop(1000);
    },
  };
}
