import { createMemoryStores } from '../fakes';
import { describeSummaryStoreContract } from './summary-store.contract';
import { describeThreadStoreContract } from './thread-store.contract';
import { describeToolRunStoreContract } from './tool-run-store.contract';
import { describeTranscriptStoreContract } from './transcript-store.contract';
import { describeTurnStoreContract } from './turn-store.contract';

// The store contracts on the in-memory fakes (each case on a fresh in-memory database). The same suites run on the
// Postgres repositories in stores.int.test.ts.
describeThreadStoreContract('in-memory fake', () => createMemoryStores());
describeTranscriptStoreContract('in-memory fake', () => createMemoryStores());
describeTurnStoreContract('in-memory fake', () => createMemoryStores());
describeSummaryStoreContract('in-memory fake', () => createMemoryStores());
describeToolRunStoreContract('in-memory fake', () => createMemoryStores());
