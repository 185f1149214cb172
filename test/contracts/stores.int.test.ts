import { beforeAll } from 'vitest';
import { createSummaryRepository } from '../../src/db/summary-repository';
import { createThreadRepository } from '../../src/db/thread-repository';
import { createToolRunRepository } from '../../src/db/tool-run-repository';
import { createTranscriptRepository } from '../../src/db/transcript-repository';
import { createTurnRepository } from '../../src/db/turn-repository';
import type { Stores } from '../fakes';
import { useSuiteDatabase } from '../support/databases';
import type { SetCreatedAt } from './store-fixtures';
import { describeSummaryStoreContract } from './summary-store.contract';
import { describeThreadStoreContract } from './thread-store.contract';
import { describeToolRunStoreContract } from './tool-run-store.contract';
import { describeTranscriptStoreContract } from './transcript-store.contract';
import { describeTurnStoreContract } from './turn-store.contract';

// The store contracts on the Postgres repositories: one migrated database for the whole file; cases stay apart by
// working on their own users and threads (random ids), so nothing is truncated between them.
const suite = useSuiteDatabase('contracts');
let stores: Stores;

beforeAll(() => {
  const { db } = suite;
  stores = {
    threads: createThreadRepository(db),
    transcript: createTranscriptRepository(db),
    turns: createTurnRepository(db, { recallTokens: 0 }),
    summaries: createSummaryRepository(db),
    toolRuns: createToolRunRepository(db),
  };
});

/** The backdoor of the ordering cases: an UPDATE of the rows' created_at. */
const setCreatedAt: SetCreatedAt = async (_stores, { turnIds, messageIds }, createdAt) => {
  await suite.db.$executeRaw`UPDATE turns SET created_at = ${createdAt} WHERE id = ANY (${turnIds}::uuid[])`;
  await suite.db.$executeRaw`UPDATE messages SET created_at = ${createdAt} WHERE id = ANY (${messageIds}::uuid[])`;
};

describeThreadStoreContract('Postgres repositories', () => stores);
describeTranscriptStoreContract('Postgres repositories', () => stores, setCreatedAt);
describeTurnStoreContract('Postgres repositories', () => stores, setCreatedAt);
describeSummaryStoreContract('Postgres repositories', () => stores);
describeToolRunStoreContract('Postgres repositories', () => stores);
