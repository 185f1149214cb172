import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createDatabase, type Database } from '../../src/db/prisma-client';
import { applyMigrations } from '../../src/db/migrate';
import { createSummaryRepository } from '../../src/db/summary-repository';
import { createThreadRepository } from '../../src/db/thread-repository';
import { createToolRunRepository } from '../../src/db/tool-run-repository';
import { createTranscriptRepository } from '../../src/db/transcript-repository';
import { createTurnRepository } from '../../src/db/turn-repository';
import type { Stores } from '../fakes';
import { createTestDatabase } from '../support/databases';
import type { SetCreatedAt } from './store-fixtures';
import { describeSummaryStoreContract } from './summary-store.contract';
import { describeThreadStoreContract } from './thread-store.contract';
import { describeToolRunStoreContract } from './tool-run-store.contract';
import { describeTranscriptStoreContract } from './transcript-store.contract';
import { describeTurnStoreContract } from './turn-store.contract';

// The store contracts on the Postgres repositories: one migrated database for the whole file; cases stay apart by
// working on their own users and threads (random ids), so nothing is truncated between them.
const migrationsDir = path.resolve(import.meta.dirname, '../../prisma/migrations');
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
let database: { url: string; drop(): Promise<void> };
let db: Database;
let stores: Stores;

beforeAll(async () => {
  database = await createTestDatabase('contracts');
  await applyMigrations({ databaseUrl: database.url, migrationsDir, log: silent });
  db = createDatabase({ url: database.url, poolSize: 4 });
  stores = {
    threads: createThreadRepository(db),
    transcript: createTranscriptRepository(db),
    turns: createTurnRepository(db, { recallTokens: 0 }),
    summaries: createSummaryRepository(db),
    toolRuns: createToolRunRepository(db),
  };
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

/** The backdoor of the ordering cases: an UPDATE of the rows' created_at. */
const setCreatedAt: SetCreatedAt = async (_stores, { turnIds, messageIds }, createdAt) => {
  await db.$executeRaw`UPDATE turns SET created_at = ${createdAt} WHERE id = ANY (${turnIds}::uuid[])`;
  await db.$executeRaw`UPDATE messages SET created_at = ${createdAt} WHERE id = ANY (${messageIds}::uuid[])`;
};

describeThreadStoreContract('Postgres repositories', () => stores);
describeTranscriptStoreContract('Postgres repositories', () => stores, setCreatedAt);
describeTurnStoreContract('Postgres repositories', () => stores, setCreatedAt);
describeSummaryStoreContract('Postgres repositories', () => stores);
describeToolRunStoreContract('Postgres repositories', () => stores);
