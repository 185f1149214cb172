import type { Thread, ThreadSettings, TranscriptMessage, Turn } from '../domain/types';

/** Why a pin was refused: the thread's pinned tokens would pass the cap. */
export interface PinRefusal {
  pinned: false;
  /** Tokens pinned now (entries at or after the context start). */
  pinnedTokens: number;
  /** Tokens the request would add. */
  addedTokens: number;
}

/**
 * The writes of the memory controls (pins, per-thread settings, fresh context, forget, regenerate). Each is one
 * transaction that locks the thread row and bumps the thread's version, so a fold planned before it re-plans.
 */
export interface MemoryControlsStore {
  /** Messages with a seq in [fromSeq, throughSeq], ascending (to find tool exchanges around a message). */
  listMessagesBySeq(input: { threadId: string; fromSeq: number; throughSeq: number }): Promise<TranscriptMessage[]>;
  /** Transcript messages of the given seqs (a subset of the thread's). */
  findMessagesBySeq(threadId: string, seqs: number[]): Promise<TranscriptMessage[]>;
  /** Non-user messages answering `userMessageId` (its own turn, retries and regenerations), ascending seq. */
  listAnswers(threadId: string, userMessageId: string): Promise<TranscriptMessage[]>;
  /** Tokens of the pinned entries at or after the context start. */
  pinnedTokens(threadId: string): Promise<number>;
  /**
   * Pins the messages of `seqs`: their context entries are marked pinned (re-created from the transcript when a
   * fold already took them), unless the pinned tokens would pass `maxPinnedTokens`.
   */
  pin(input: {
    threadId: string;
    seqs: number[];
    maxPinnedTokens: number;
  }): Promise<{ pinned: true; messages: TranscriptMessage[]; pinnedTokens: number } | PinRefusal>;
  /** Unpins: the entries return to the window (and are folded at the next fold when older than it). */
  unpin(input: { threadId: string; seqs: number[] }): Promise<{ messages: TranscriptMessage[]; pinnedTokens: number }>;
  updateSettings(input: {
    threadId: string;
    settings: ThreadSettings;
    memoryMode: 'summary' | 'window-only';
  }): Promise<Thread>;
  /** Fresh context from the next seq on; remembers how to undo it until the next message. */
  resetContext(threadId: string): Promise<Thread>;
  /** Undoes the last fresh context; null when there is none to undo (a message came since, or it was undone). */
  undoContextReset(threadId: string): Promise<Thread | null>;
  /**
   * Forgets messages: tombstones them (content erased, deletedAt set), deletes their context entries, erases the tool
   * runs they made or reported, redacts every summary revision whose text may hold them, and withdraws the current
   * summary when it covered one of them.
   */
  forget(input: {
    threadId: string;
    messageIds: string[];
  }): Promise<{ messages: TranscriptMessage[]; thread: Thread; redactedRevisions: number }>;
  /**
   * Regenerate: marks the answers after the thread's last user message superseded, drops them from the window and
   * queues a `regenerate` turn for it, in one transaction. Throws BUSY while a turn is queued or running.
   */
  queueRegenerate(input: {
    threadId: string;
    userMessageId: string;
  }): Promise<{ turn: Turn; superseded: TranscriptMessage[] }>;
  /** The newest user message with a seq that is not forgotten. */
  lastUserMessage(threadId: string): Promise<TranscriptMessage | null>;
  /** Threads whose summary is withdrawn and waits for its rebuild (for the sweeper), with their version. */
  threadsAwaitingRebuild(limit: number): Promise<{ threadId: string; version: number }[]>;
}
