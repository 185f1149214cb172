import { createMemoryStores } from '../fakes';
import { describeTurnStoreContract } from './turn-store.contract';

// The store contracts on the in-memory fakes (each case on a fresh in-memory database). The same suites run on the
// Postgres repositories in stores.int.test.ts.
describeTurnStoreContract('in-memory fake', () => createMemoryStores());
