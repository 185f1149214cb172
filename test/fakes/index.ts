// In-memory fakes of the core's ports, held to the real adapters' behaviour by the suites in test/contracts.
export { createMemoryAdminThreadStore } from './memory-admin-thread-store';
export { createMemoryAuditStore } from './memory-audit-store';
export { createMemoryDatabase, type MemoryDatabase } from './memory-database';
export { createMemoryEventBus } from './memory-event-bus';
export { createMemoryExportReader } from './memory-export-reader';
export { createMemoryForkStore } from './memory-fork-store';
export { createMemoryMemoryControlsStore } from './memory-memory-controls-store';
export { createMemoryModelCallStore } from './memory-model-call-store';
export { createMemoryQueues, type MemoryJob, type MemoryQueues, type QueueName } from './memory-queues';
export { createMemorySummaryStore } from './memory-summary-store';
export { createMemoryThreadStore } from './memory-thread-store';
export { createMemoryToolRunStore } from './memory-tool-run-store';
export { createMemoryTranscriptStore } from './memory-transcript-store';
export { createMemoryTurnStore, memoryContext } from './memory-turn-store';
export { createMemoryStores, type Stores } from './memory-stores';
