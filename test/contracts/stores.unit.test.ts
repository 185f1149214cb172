import { createMemoryStores, type Stores } from '../fakes';
import type { SetCreatedAt } from './store-fixtures';
import { describeSummaryStoreContract } from './summary-store.contract';
import { describeThreadStoreContract } from './thread-store.contract';
import { describeToolRunStoreContract } from './tool-run-store.contract';
import { describeTranscriptStoreContract } from './transcript-store.contract';
import { describeTurnStoreContract } from './turn-store.contract';

// The store contracts on the in-memory fakes (each case on a fresh in-memory database). The same suites run on the
// Postgres repositories in stores.int.test.ts.
/** The fake's backdoor: its rows' createdAt (the fakes order by acceptance, their tables' insertion order). */
const setCreatedAt: SetCreatedAt = async (stores, { turnIds, messageIds }, createdAt) => {
  const { database } = stores as Stores & ReturnType<typeof createMemoryStores>;
  for (const turn of database.turns) if (turnIds.includes(turn.id)) turn.createdAt = new Date(createdAt);
  for (const message of database.messages) if (messageIds.includes(message.id)) message.createdAt = new Date(createdAt);
};

describeThreadStoreContract('in-memory fake', () => createMemoryStores());
describeTranscriptStoreContract('in-memory fake', () => createMemoryStores(), setCreatedAt);
describeTurnStoreContract('in-memory fake', () => createMemoryStores(), setCreatedAt);
describeSummaryStoreContract('in-memory fake', () => createMemoryStores());
describeToolRunStoreContract('in-memory fake', () => createMemoryStores());
