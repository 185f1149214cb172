import { createLocalEventBus } from '../../src/realtime/local-event-bus';
import { createMemoryEventBus } from '../fakes';
import { describeAdminThreadStoreContract } from './admin-thread-store.contract';
import { describeAuditStoreContract } from './audit-store.contract';
import { describeClientHistoryStoreContract } from './client-history-store.contract';
import { describeCostReportContract } from './cost-report.contract';
import { describeErasureStoreContract } from './erasure-store.contract';
import { describeEventBusContract } from './event-bus.contract';
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
import { createMemoryPortStores } from './port-fixtures';

// The contracts of the admin, export, call-record, event, saved-memory, erasure, /v1 conversation and history, search, spend and
// automatic-title ports on the in-memory fakes (each case on a fresh in-memory database). The same suites run on the
// Postgres repositories in ports.int.test.ts.
describeAuditStoreContract('in-memory fake', createMemoryPortStores);
describeModelCallStoreContract('in-memory fake', createMemoryPortStores);
describeExportReaderContract('in-memory fake', createMemoryPortStores);
describeAdminThreadStoreContract('in-memory fake', createMemoryPortStores);
describeMemoryControlsStoreContract('in-memory fake', createMemoryPortStores);
describeForkStoreContract('in-memory fake', createMemoryPortStores);
describeSavedMemoryStoreContract('in-memory fake', createMemoryPortStores);
describeErasureStoreContract('in-memory fake', createMemoryPortStores);
describeFacadeConversationStoreContract('in-memory fake', createMemoryPortStores);
describeClientHistoryStoreContract('in-memory fake', createMemoryPortStores);
describeTranscriptSearchContract('in-memory fake', createMemoryPortStores);
describeSpendStoreContract('in-memory fake', createMemoryPortStores);
describeSpendLimitAdminStoreContract('in-memory fake', createMemoryPortStores);
describeThreadTitleStoreContract('in-memory fake', createMemoryPortStores);
describeMessageContextReaderContract('in-memory fake', createMemoryPortStores);
describeEventBusContract('in-memory fake', createMemoryEventBus);
// The process's own bus has no I/O (sockets in other processes are reached through socket.io's Redis adapter,
// covered by test/realtime): its contract runs here, beside the fake's.
describeEventBusContract('local bus (src/realtime/local-event-bus.ts)', createLocalEventBus);
describeCostReportContract('in-memory fake', createMemoryPortStores);
describeModelCallHistoryContract('in-memory fake', createMemoryPortStores);
