// In-memory fakes of the core's ports (and a scripted chat model), held to the real adapters' behaviour by the suites in test/contracts.
export { createMemoryAdminThreadStore } from './memory-admin-thread-store';
export { createMemoryAuditStore } from './memory-audit-store';
export { createMemoryClientHistoryStore } from './memory-client-history-store';
export { createMemoryCostReport } from './memory-cost-report';
export { createMemoryDatabase, type MemoryDatabase } from './memory-database';
export { createMemoryErasureStore } from './memory-erasure-store';
export { createMemoryEventBus } from './memory-event-bus';
export { createMemoryExportReader } from './memory-export-reader';
export { createMemoryFacadeConversationStore } from './memory-facade-conversation-store';
export { createMemoryForkStore } from './memory-fork-store';
export { createMemoryMemoryControlsStore } from './memory-memory-controls-store';
export { createMemoryMessageContextReader } from './memory-message-context-reader';
export { createMemoryModelCallHistory } from './memory-model-call-history';
export { createMemoryModelCallStore } from './memory-model-call-store';
export { createMemoryQueueRegistry, type MemoryRegisteredQueue } from './memory-queue-registry';
export { createMemoryQueues, type MemoryJob, type MemoryQueues, type QueueName } from './memory-queues';
export { createMemorySavedMemoryStore } from './memory-saved-memory-store';
export { createMemorySpendLimitAdminStore, createMemorySpendStore } from './memory-spend-store';
export { createMemorySummaryStore } from './memory-summary-store';
export { createMemoryThreadStore } from './memory-thread-store';
export { createMemoryThreadTitleStore } from './memory-thread-title-store';
export { createMemoryToolRunStore } from './memory-tool-run-store';
export { createMemoryTranscriptSearch } from './memory-transcript-search';
export { createMemoryTranscriptStore } from './memory-transcript-store';
export { createMemoryTurnStore, memoryContext, type MemoryContextOptions } from './memory-turn-store';
export { createMemoryStores, type Stores } from './memory-stores';
export {
  createScriptedChatModel,
  scriptedFailure,
  scriptedText,
  scriptedToolCalls,
  type ScriptedCall,
  type ScriptedChatModel,
  type ScriptedChatModelOptions,
  type ScriptedPause,
  type ScriptedReply,
  type ScriptStep,
} from './scripted-chat-model';
