import { beforeAll } from 'vitest';
import type { ModelCallRecord } from '../../src/core/ports';
import { createAdminThreadRepository } from '../../src/db/admin-thread-repository';
import { createAuditRepository } from '../../src/db/audit-repository';
import { createClientHistoryRepository } from '../../src/db/client-history-repository';
import { createCostReport } from '../../src/db/cost-report';
import { createModelCallHistory } from '../../src/db/model-call-history';
import { createForkRepository } from '../../src/db/fork-repository';
import { createMemoryControlsRepository } from '../../src/db/memory-controls-repository';
import { createMessageContextReader } from '../../src/db/message-context-reader';
import { createModelCallRepository } from '../../src/db/model-call-repository';
import { createErasureRepository } from '../../src/db/erasure-repository';
import { createFacadeConversationRepository } from '../../src/db/facade-conversation-repository';
import { createSavedMemoryRepository } from '../../src/db/saved-memory-repository';
import { createSearchRepository } from '../../src/db/search-repository';
import { createSpendLimitAdminRepository, createSpendRepository } from '../../src/db/spend-repository';
import { createSummaryRepository } from '../../src/db/summary-repository';
import { createThreadRepository } from '../../src/db/thread-repository';
import { createThreadTitleRepository } from '../../src/db/thread-title-repository';
import { createToolRunRepository } from '../../src/db/tool-run-repository';
import { createTranscriptRepository } from '../../src/db/transcript-repository';
import { createTurnRepository } from '../../src/db/turn-repository';
import { useSuiteDatabase } from '../support/databases';
import { describeAdminThreadStoreContract } from './admin-thread-store.contract';
import { describeAuditStoreContract } from './audit-store.contract';
import { describeClientHistoryStoreContract } from './client-history-store.contract';
import { describeCostReportContract } from './cost-report.contract';
import { describeErasureStoreContract } from './erasure-store.contract';
import { describeExportReaderContract } from './export-reader.contract';
import { describeFacadeConversationStoreContract } from './facade-conversation-store.contract';
import { describeForkStoreContract } from './fork-store.contract';
import { describeMemoryControlsStoreContract } from './memory-controls-store.contract';
import { describeMessageContextReaderContract } from './message-context-reader.contract';
import { describeModelCallHistoryContract } from './model-call-history.contract';
import { describeModelCallStoreContract } from './model-call-store.contract';
import { describeSavedMemoryStoreContract } from './saved-memory-store.contract';
import { describeSpendLimitAdminStoreContract, describeSpendStoreContract } from './spend-store.contract';
import { describeThreadTitleStoreContract } from './thread-title-store.contract';
import { describeTranscriptSearchContract } from './transcript-search.contract';
import { RECALL_TURNS, type PortStores } from './port-fixtures';

// The contracts of the admin, export and call-record ports on the Postgres repositories (the event bus has no I/O:
// ports.unit.test.ts runs its contract on the process's bus). One migrated database for the file; cases work on
// their own users and threads (random ids).
const suite = useSuiteDatabase('port-contracts');
let stores: PortStores;

/** A stored call as the port's record: the columns the port writes, oldest first. */
async function storedCalls(threadId: string): Promise<ModelCallRecord[]> {
  return storedCallsWhere({ threadId });
}

async function storedCallsWhere(where: { threadId: string } | { userId: string }): Promise<ModelCallRecord[]> {
  const rows = await suite.db.modelCall.findMany({ where, orderBy: { createdAt: 'asc' } });
  return rows.map((row) => ({
    threadId: row.threadId,
    messageId: row.messageId,
    purpose: row.purpose as ModelCallRecord['purpose'],
    model: row.model,
    estimatedPromptTokens: row.estimatedPromptTokens,
    reportedPromptTokens: row.reportedPromptTokens,
    reportedCompletionTokens: row.reportedCompletionTokens,
    latencyMs: row.latencyMs,
    summaryRevision: row.summaryRevision,
    windowFromSeq: row.windowFromSeq,
    windowThroughSeq: row.windowThroughSeq,
    pinnedSeqs: row.pinnedSeqs,
    recalledSeqs: row.recalledSeqs,
    omitted: row.omitted,
    overflowRetry: row.overflowRetry,
    error: row.error,
  }));
}

beforeAll(() => {
  const { db } = suite;
  const memory = createMemoryControlsRepository(db);
  stores = {
    threads: createThreadRepository(db),
    transcript: createTranscriptRepository(db),
    turns: createTurnRepository(db, { recallTokens: 0 }),
    summaries: createSummaryRepository(db),
    toolRuns: createToolRunRepository(db),
    audit: createAuditRepository(db),
    calls: createModelCallRepository(db),
    storedCalls,
    storedCallsOfUser: (userId) => storedCallsWhere({ userId }),
    exportReader: memory,
    memory,
    forks: createForkRepository(db),
    admin: createAdminThreadRepository(db),
    savedMemories: createSavedMemoryRepository(db),
    markSavedMemoriesStale: async (ids) => {
      await db.$executeRaw`UPDATE saved_memories SET tokens_stale = true WHERE id = ANY (${ids}::uuid[])`;
    },
    erasures: createErasureRepository(db),
    conversations: createFacadeConversationRepository(db),
    clientHistory: createClientHistoryRepository(db),
    search: createSearchRepository(db),
    recallTurns: createTurnRepository(db, RECALL_TURNS),
    spend: createSpendRepository(db),
    spendAdmin: createSpendLimitAdminRepository(db),
    titles: createThreadTitleRepository(db),
    messageContext: createMessageContextReader(db),
    costs: createCostReport(db),
    callHistory: createModelCallHistory(db),
  };
});

describeAuditStoreContract('Postgres repositories', () => stores);
describeModelCallStoreContract('Postgres repositories', () => stores);
describeExportReaderContract('Postgres repositories', () => stores);
describeAdminThreadStoreContract('Postgres repositories', () => stores);
describeMemoryControlsStoreContract('Postgres repositories', () => stores);
describeForkStoreContract('Postgres repositories', () => stores);
describeSavedMemoryStoreContract('Postgres repositories', () => stores);
describeErasureStoreContract('Postgres repositories', () => stores);
describeFacadeConversationStoreContract('Postgres repositories', () => stores);
describeClientHistoryStoreContract('Postgres repositories', () => stores);
describeTranscriptSearchContract('Postgres repositories', () => stores);
describeSpendStoreContract('Postgres repositories', () => stores);
describeSpendLimitAdminStoreContract('Postgres repositories', () => stores);
describeThreadTitleStoreContract('Postgres repositories', () => stores);
describeMessageContextReaderContract('Postgres repositories', () => stores);
describeCostReportContract('Postgres repositories', () => stores);
describeModelCallHistoryContract('Postgres repositories', () => stores);
