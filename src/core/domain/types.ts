import type {
  ContextEntry,
  HeldRecallNote,
  MemoryMode,
  OpenAIClientSettings,
  RecalledMessage,
  Role,
  SavedMemoryItem,
  SummaryState,
  ToolCall,
} from '../context/types';

/** Lifecycle of a transcript message: its text changes only while `streaming`. */
export type MessageStatus = 'pending' | 'streaming' | 'complete' | 'error' | 'cancelled';

/** One transcript message, as the domain sees it (never a Prisma row). */
export interface TranscriptMessage {
  id: string;
  threadId: string;
  /** Gapless per thread; null while a user message waits in its thread's queue. */
  seq: number | null;
  role: Role;
  content: string;
  toolCalls: ToolCall[] | null;
  toolCallId: string | null;
  status: MessageStatus;
  error: { code: string; message: string } | null;
  tokens: number;
  clientMessageId: string | null;
  turnId: string | null;
  toolRunId: string | null;
  pinned: boolean;
  superseded: boolean;
  deleted: boolean;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/** Per-thread overrides of the deployment's memory policies (strings in the env's forms). */
export interface ThreadSettings {
  trigger?: string;
  keep?: string;
  summaryPrompt?: string;
  /** Tokens of the auto-recall slot (overrides RECALL_TOKENS; 0 turns recall off for the thread). */
  recallTokens?: number;
  /** Where auto-recall and search_transcript look: this thread, or all of the owner's threads (overrides RECALL_SCOPE). */
  recallScope?: RecallScope;
  /** Set by the OpenAI-compatible route (/v1): what its client sends with every request (see src/core/facade). */
  openaiClient?: OpenAIClientSettings;
  /** A conversation's `metadata` (the Conversations API: at most 16 pairs), the client's own; the model never sees it. */
  conversationMetadata?: Record<string, string>;
}

/** Where auto-recall and search_transcript look (issue 27). */
export type RecallScope = 'thread' | 'user';

export interface Thread {
  id: string;
  ownerId: string;
  title: string;
  createdAt: Date;
  updatedAt: Date;
  lastActivityAt: Date;
  lastSeq: number;
  summary: SummaryState | null;
  /** The encoding `summary.tokens` was counted with. */
  summaryEncoding: string | null;
  contextStartSeq: number;
  memoryMode: MemoryMode;
  settings: ThreadSettings;
  version: number;
  lastFoldAt: Date | null;
  lastFoldError: string | null;
  /** A fork: the thread it was branched from and the last seq it copied; null for a thread started afresh. */
  forkedFrom: { threadId: string | null; seq: number } | null;
}

export type TurnKind = 'message' | 'retry' | 'follow-up' | 'regenerate';
export type TurnStatus = 'queued' | 'running' | 'complete' | 'error' | 'cancelled';

export interface Turn {
  id: string;
  threadId: string;
  kind: TurnKind;
  userMessageId: string | null;
  status: TurnStatus;
  error: { code: string; message: string } | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /**
   * Set while queued when the request that queued it went away (a /v1 client): the turn starts only to end as
   * cancelled, without calling the model (its user message still takes its seq). Absent otherwise.
   */
  cancelRequested?: boolean;
}

/** Everything a turn or a fold needs to build a pack: the thread and its context entries. */
export interface ThreadContext {
  thread: Thread;
  /** Unfolded, unpinned entries at or after the context start, ascending seq. */
  window: ContextEntry[];
  pinned: ContextEntry[];
  /** Auto-recall candidates, best first, when the context was read for a model call (see TurnStore.loadContext). */
  recalled?: RecalledMessage[];
  /** Cross-thread recall candidates (the owner's other threads, never this thread's fork family), best first. */
  recalledElsewhere?: RecalledMessage[];
  /** The owner's saved memories (newest first, within USER_MEMORY_TOKENS), read with the context of a model call. */
  savedMemories?: SavedMemoryItem[];
  /** Recall notes earlier calls of this summary revision showed (sticky recall), read with the context of a model call. */
  heldRecall?: HeldRecallNote[];
  /** Tokens of the recall notes held since the last fold (ContextState.heldRecallTokens), read with every context read. */
  heldRecallTokens?: number;
  /**
   * The fingerprints of the thread's newest recorded chat prompt (read with recall, on the turn's path): where the next
   * call's prompt first differs from it, when this process has not seen the thread's previous call.
   */
  lastPrompt?: { tools: number; messages: number[] } | null;
}

/** What a pack carries instead of a summary withdrawn after a forget, until the rebuild commits. */
export const MEMORY_REBUILDING_NOTE =
  'The memory of the earlier part of this conversation is being rebuilt after the user deleted a message; ' +
  'it is not available right now. Do not guess what was said earlier.';

/**
 * True while the thread's summary is withdrawn: a forgotten message was covered by it, so its text was cleared
 * (kept only as redacted revisions) and a rebuild from the remaining transcript is pending. Derived from the state:
 * a summary that covers messages at or after the context start but has no text. (A fresh context also clears the
 * text, but moves the context start past the coverage, so it never reads as withdrawn.)
 */
export function isSummaryWithdrawn(thread: Pick<Thread, 'summary' | 'contextStartSeq'>): boolean {
  const summary = thread.summary;
  return (
    summary !== null &&
    summary.revision > 0 &&
    summary.text === '' &&
    summary.coveredThroughSeq >= thread.contextStartSeq
  );
}
