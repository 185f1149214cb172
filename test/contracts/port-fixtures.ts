import type {
  AdminThreadStore,
  AuditStore,
  ClientHistoryStore,
  CostReport,
  ErasureStore,
  ExportReader,
  FacadeConversationStore,
  ForkStore,
  MemoryControlsStore,
  MessageContextReader,
  ModelCallHistory,
  ModelCallRecord,
  ModelCallStore,
  SavedMemoryStore,
  ThreadTitleStore,
  TranscriptSearch,
  TurnStore,
} from '../../src/core/ports';
import type { SpendLimitAdminStore, SpendStore } from '../../src/core/ports/spend-store';
import {
  createMemoryAdminThreadStore,
  createMemoryAuditStore,
  createMemoryClientHistoryStore,
  createMemoryCostReport,
  createMemoryDatabase,
  createMemoryErasureStore,
  createMemoryExportReader,
  createMemoryFacadeConversationStore,
  createMemoryForkStore,
  createMemoryMemoryControlsStore,
  createMemoryMessageContextReader,
  createMemoryModelCallHistory,
  createMemoryModelCallStore,
  createMemorySavedMemoryStore,
  createMemorySpendLimitAdminStore,
  createMemorySpendStore,
  createMemoryStores,
  createMemoryThreadTitleStore,
  createMemoryTranscriptSearch,
  createMemoryTurnStore,
  type Stores,
} from '../fakes';

/**
 * The stores of the turn (store-fixtures.ts) plus the ports of the memory controls, the admin, the export, the call
 * records, saved memories, erasure, the /v1 conversations and history matching, search, spend limits and automatic titles.
 */
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
  savedMemories: SavedMemoryStore;
  /** Marks the items' token counts as counted for an earlier rendering (a migration's or reindex's work, not a port's). */
  markSavedMemoriesStale(ids: string[]): Promise<void>;
  erasures: ErasureStore;
  conversations: FacadeConversationStore;
  /** The /v1 history matching's reads (the chain hashes of a thread's client view). */
  clientHistory: ClientHistoryStore;
  search: TranscriptSearch;
  /** A TurnStore over the same tables whose context reads bring auto-recall (100 tokens) and saved memories (50). */
  recallTurns: TurnStore;
  spend: SpendStore;
  spendAdmin: SpendLimitAdminStore;
  titles: ThreadTitleStore;
  messageContext: MessageContextReader;
  /** The admin's read models of the call rows (cost report, tokens chart). */
  costs: CostReport;
  callHistory: ModelCallHistory;
}

/** The context options of `recallTurns`. */
export const RECALL_TURNS = { recallTokens: 100, recallScope: 'thread', userMemoryTokens: 50 } as const;

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
        .map(({ userId: _userId, id: _id, createdAt: _at, ...call }) => structuredClone(call)),
    storedCallsOfUser: async (userId) =>
      database.calls
        .filter((call) => call.userId === userId)
        .map(({ userId: _userId, id: _id, createdAt: _at, ...call }) => structuredClone(call)),
    exportReader: createMemoryExportReader(database),
    admin: createMemoryAdminThreadStore(database),
    memory: createMemoryMemoryControlsStore(database),
    forks: createMemoryForkStore(database),
    savedMemories: createMemorySavedMemoryStore(database),
    markSavedMemoriesStale: async (ids) => {
      for (const item of database.savedMemories) if (ids.includes(item.id)) item.tokensStale = true;
    },
    erasures: createMemoryErasureStore(database),
    conversations: createMemoryFacadeConversationStore(database),
    clientHistory: createMemoryClientHistoryStore(database),
    search: createMemoryTranscriptSearch(database),
    recallTurns: createMemoryTurnStore(database, RECALL_TURNS),
    spend: createMemorySpendStore(database),
    spendAdmin: createMemorySpendLimitAdminStore(database),
    titles: createMemoryThreadTitleStore(database),
    messageContext: createMemoryMessageContextReader(database),
    costs: createMemoryCostReport(database),
    callHistory: createMemoryModelCallHistory(database),
  };
}
