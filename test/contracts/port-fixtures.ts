import type {
  AdminThreadStore,
  AuditStore,
  ExportReader,
  ForkStore,
  MemoryControlsStore,
  ModelCallRecord,
  ModelCallStore,
} from '../../src/core/ports';
import {
  createMemoryAdminThreadStore,
  createMemoryAuditStore,
  createMemoryDatabase,
  createMemoryExportReader,
  createMemoryForkStore,
  createMemoryMemoryControlsStore,
  createMemoryModelCallStore,
  createMemoryStores,
  type Stores,
} from '../fakes';

/** The stores of the turn (store-fixtures.ts) plus the ports of the memory controls, the admin, the export and the call records. */
export interface PortStores extends Stores {
  audit: AuditStore;
  calls: ModelCallStore;
  /** The calls stored for a thread, oldest first (read by the test, not a port: the admin reads them through SQL). */
  storedCalls(threadId: string): Promise<ModelCallRecord[]>;
  /** The calls stored for a user (by the user the row names), oldest first. */
  storedCallsOfUser(userId: string): Promise<ModelCallRecord[]>;
  exportReader: ExportReader;
  admin: AdminThreadStore;
  memory: MemoryControlsStore;
  forks: ForkStore;
}

export type MakePortStores = () => PortStores;

/** Every in-memory fake over one fresh MemoryDatabase. */
export function createMemoryPortStores(): PortStores {
  const database = createMemoryDatabase();
  return {
    ...createMemoryStores(database),
    audit: createMemoryAuditStore(database),
    calls: createMemoryModelCallStore(database),
    storedCalls: async (threadId) =>
      database.calls
        .filter((call) => call.threadId === threadId)
        .map(({ userId: _userId, ...call }) => structuredClone(call)),
    storedCallsOfUser: async (userId) =>
      database.calls
        .filter((call) => call.userId === userId)
        .map(({ userId: _userId, ...call }) => structuredClone(call)),
    exportReader: createMemoryExportReader(database),
    admin: createMemoryAdminThreadStore(database),
    memory: createMemoryMemoryControlsStore(database),
    forks: createMemoryForkStore(database),
  };
}
