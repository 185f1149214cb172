import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { createApplication, type Application } from '../../../src/app/compose';
import { createLogger } from '../../../src/app/logger';
import { mountWebApp } from '../../../src/app/mount-web-app';
import { loadEnv } from '../../../src/config/env';
import { applyMigrations } from '../../../src/db/migrate';
import type { SendMessageResponseDto, ThreadDto } from '../../../src/shared/api';
import { startOpenAIStub, type OpenAIStub, type StubResponder } from '../../support/openai-stub';
import { classifyRequest, summaryResponder } from '../../support/summary-stub';

export const ADMIN_TOKEN = 'browser-admin-token-0123456789';
const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/migrations');
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

export interface BrowserApp {
  application: Application;
  baseUrl: string;
  /** null when started with the offline model. */
  stub: OpenAIStub | null;
  api<T>(pathName: string, init?: { method?: string; token?: string; json?: unknown }): Promise<T>;
  guest(): Promise<{ userId: string; token: string }>;
  /** Sends messages over REST, each waiting for its answer. */
  chat(token: string, threadId: string, contents: string[]): Promise<void>;
  createThread(token: string, title: string): Promise<ThreadDto>;
  stop(): Promise<void>;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `${name} is not set: run the browser tests with \`npx playwright test\` (its global setup starts the services)`,
    );
  return value;
}

async function createDatabase(): Promise<string> {
  const adminUrl = required('BROWSER_TEST_PG_ADMIN_URL');
  const name = `browser_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The real application (REST, sockets, workers, the built web app) on 127.0.0.1, a fresh database and its own
 * Redis prefix, talking to an OpenAI-compatible stub (`offline: true`: the built-in offline model instead).
 */
export async function startBrowserApp(
  options: { env?: Record<string, string>; responder?: StubResponder; offline?: boolean } = {},
): Promise<BrowserApp> {
  const stub = options.offline
    ? null
    : await startOpenAIStub({ classifyRequest, responder: options.responder ?? summaryResponder() });
  const databaseUrl = await createDatabase();
  await applyMigrations({ databaseUrl, migrationsDir, log: silent });
  const redisUrl = required('BROWSER_TEST_REDIS_URL');
  const env = loadEnv({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    REDIS_PREFIX: `b${randomBytes(5).toString('hex')}`,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '10000',
    // Titles from the first message's words: a title job's model call would interleave with the requests a test
    // scripts and counts on its stub (test/titles/chat-titles.int.test.ts turns the model's titles on).
    CHAT_TITLES: 'words',
    ...(stub ? { OPENAI_BASE_URL: stub.url, OPENAI_API_KEY: 'sk-test', CHAT_MODEL: 'gpt-4o-mini' } : {}),
    ...options.env,
  });
  const application = await createApplication({
    env,
    databaseUrl,
    redisUrl,
    authSecret: randomBytes(32).toString('hex'),
    adminToken: ADMIN_TOKEN,
    log: createLogger({ level: env.LOG_LEVEL, pretty: false }),
    mode: 'all',
    mountStatic: mountWebApp(),
    tuning: { sweepIntervalMs: 500, stalledIntervalMs: 1000, lockDurationMs: 2000, retryBaseMs: 20, leaseTtlMs: 5000 },
  });
  const port = await application.listen(0, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${port}`;

  async function api<T>(pathName: string, init: { method?: string; token?: string; json?: unknown } = {}): Promise<T> {
    const headers: Record<string, string> = {};
    if (init.token) headers.Authorization = `Bearer ${init.token}`;
    if (init.json !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(`${baseUrl}${pathName}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${pathName}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  return {
    application,
    baseUrl,
    stub,
    api,
    guest: () => api('/api/auth/guest', { method: 'POST' }),
    createThread: (token, title) => api<ThreadDto>('/api/threads', { method: 'POST', token, json: { title } }),
    async chat(token, threadId, contents) {
      for (const content of contents) {
        const result = await api<SendMessageResponseDto>(`/api/threads/${threadId}/messages`, {
          method: 'POST',
          token,
          json: { content },
        });
        if (result.turn.status !== 'complete')
          throw new Error(`turn ended ${result.turn.status}: ${JSON.stringify(result.turn.error)}`);
      }
    },
    async stop() {
      await application.stop(1000);
      await stub?.close();
    },
  };
}
