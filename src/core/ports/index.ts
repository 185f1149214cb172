/**
 * What the core needs from the world, one port a file. Adapters implement these (db/, jobs/, llm/, realtime/);
 * tests use the fakes in test/fakes. Wiring happens once, in src/app/compose.ts.
 */
export type { AdminThreadRow, AdminThreadSort, AdminThreadStore, FoldLagPolicy } from './admin-thread-store';
export type { AuditEntry, AuditStore } from './audit-store';
export type { ChatModelPort, ChatResult } from './chat-model-port';
export type {
  ClientHistoryStore,
  ClientMessage,
  ClientToolCall,
  ClientViewRow,
  PrefixHit,
} from './client-history-store';
export type { Clock } from './clock';
export type { CostGrouping, CostReport, UsageGroup } from './cost-report';
export type { ErasureRecord, ErasureStore } from './erasure-store';
export type { ExportReader } from './export-reader';
export {
  BRANCH_TAIL_CHARS,
  type AppendedMessage,
  type ConversationBranch,
  type FacadeConversationStore,
} from './facade-conversation-store';
export type { FoldQueue } from './fold-queue';
export type { ForgetRebuildQueue } from './forget-rebuild-queue';
export type { ForkRecord, ForkStore, MessageCopy } from './fork-store';
export type { IdleFoldQueue } from './idle-fold-queue';
export type { LogPort } from './log-port';
export type { MemoryControlsStore, PinRefusal } from './memory-controls-store';
export type { MessageContextReader } from './message-context-reader';
export type { ModelCallHistory } from './model-call-history';
export type {
  ChatCallManifest,
  ChatCallRecord,
  ModelCallRecord,
  ModelCallStore,
  PromptDivergence,
  PromptFingerprints,
} from './model-call-store';
export type { Page } from './page';
export type { QueueCounts, QueueRegistry } from './queue-registry';
export type { RebuildQueue } from './rebuild-queue';
export type { SavedMemory, SavedMemorySource, SavedMemoryStatus, SavedMemoryStore } from './saved-memory-store';
export type { SummarizerPort } from './summarizer-port';
export type { SummaryCommit, SummaryRevisionRecord, SummaryStore } from './summary-store';
export type { ThreadEventBus } from './thread-event-bus';
export type { ThreadStore } from './thread-store';
export type { FirstExchange, ThreadTitleStore } from './thread-title-store';
export type { TitleQueue } from './title-queue';
export type { ToolQueue } from './tool-queue';
export type { AsyncRunCaps, ToolRun, ToolRunStatus, ToolRunStore } from './tool-run-store';
export type { ElsewhereMatch, MessageSearchHit, TranscriptMatch, TranscriptSearch } from './transcript-search';
export type { TranscriptStore } from './transcript-store';
export type { AcceptedMessage, NextTurn, TurnStore } from './turn-store';
export type { ThreadSettings } from '../domain/types';
