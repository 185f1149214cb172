import type { ErrorBody } from '../../shared/errors';
import type { ContextEntry, ToolCall } from '../context/types';
import type { MessageStatus, ThreadContext, TranscriptMessage, Turn, TurnKind } from '../domain/types';
import type { ChatCallRecord } from './model-call-store';

export interface AcceptedMessage {
  message: TranscriptMessage;
  turn: Turn;
  /** True when `clientMessageId` had been seen: nothing new was stored. */
  duplicate: boolean;
}

/** What the runner's step between turns found (TurnStore.nextTurn). */
export type NextTurn =
  | { outcome: 'leased-elsewhere' }
  | { outcome: 'idle' }
  | { outcome: 'started'; turn: Turn; userMessage: TranscriptMessage | null; context: ThreadContext };

/** The turn queue, the per-thread lease and the transcript writes of a turn. */
export interface TurnStore {
  /**
   * Stores the user message as pending and queues its turn, in one transaction. Throws NOT_FOUND when the thread
   * is not `ownerId`'s (null: any owner; a repeated clientMessageId is only found on the owner's thread), BUSY past
   * `maxQueued`.
   */
  acceptUserMessage(input: {
    threadId: string;
    ownerId: string | null;
    content: string;
    tokens: number;
    encoding: string;
    clientMessageId: string | null;
    maxQueued: number;
  }): Promise<AcceptedMessage>;
  /**
   * Queues a turn with no new user message (a retry) under the thread's lock: BUSY when `maxQueued` turns already
   * wait besides the running one, CONFLICT when a turn for the same user message is already queued or running.
   */
  queueTurn(input: {
    threadId: string;
    kind: TurnKind;
    userMessageId: string | null;
    maxQueued: number;
  }): Promise<Turn>;
  findTurn(turnId: string): Promise<Turn | null>;
  /** Takes or renews the thread's lease with compare-and-set; false when another owner holds a live lease. */
  acquireLease(input: { threadId: string; owner: string; ttlMs: number }): Promise<boolean>;
  /**
   * Releases the lease when `owner` holds it. True when turns are queued after the release (checked after it, so
   * a send that arrived while the lease was held, and could not take it, is seen).
   */
  releaseLease(input: { threadId: string; owner: string }): Promise<boolean>;
  /**
   * The runner's step between turns: takes or renews the thread's lease for `owner` (as acquireLease) and under it
   * starts the oldest queued turn: its pending user message gets the next seq and joins the window, in one
   * transaction; the context of the turn's first model call (with auto-recall) comes with it. When nothing is queued
   * the lease is released in that same transaction (`idle`): a send that commits after it finds the lease free, so
   * its own kick runs its turn. `leased-elsewhere` when another owner holds a live lease.
   */
  nextTurn(input: { threadId: string; owner: string; ttlMs: number }): Promise<NextTurn>;
  /**
   * The thread and its context in one statement. With `recall`, the same statement also finds the auto-recall
   * candidates (ThreadContext.recalled): messages older than the window, from the context start on, not pinned, that
   * best match the newest user message of the window and the answer it replies to (skipped when the thread's recall
   * slot is 0). With `promptParts`, what a chat prompt shows besides the recall slot (the owner's saved memories, held
   * recall notes) comes without the candidates' search: a fold that continues the chat's prompt reads so.
   */
  loadContext(threadId: string, options?: { recall?: boolean; promptParts?: boolean }): Promise<ThreadContext | null>;
  /** Stores counts redone with another encoding (see refreshTokenCounts). */
  saveTokenCounts(input: {
    threadId: string;
    encoding: string;
    entries: { seq: number; tokens: number }[];
    summaryTokens: number | null;
  }): Promise<void>;
  /** Appends a message produced by the turn (assistant or tool) with the next seq. */
  appendTurnMessage(input: {
    threadId: string;
    turnId: string;
    role: 'assistant' | 'tool' | 'system';
    content: string;
    status: MessageStatus;
    toolCalls?: ToolCall[];
    toolCallId?: string;
    toolRunId?: string;
  }): Promise<TranscriptMessage>;
  /** Saves the text so far of a streaming message (throttled by the caller). */
  saveStreamingText(messageId: string, content: string): Promise<void>;
  /**
   * Ends a message: final text and status; when `entry` is given, the message's context entry joins the window
   * in the same transaction, and when `call` is given, the model call that produced it with its manifest.
   */
  finishMessage(input: {
    messageId: string;
    content: string;
    status: MessageStatus;
    error?: { code: string; message: string };
    toolCalls?: ToolCall[];
    tokens: number;
    encoding: string;
    entry?: Omit<ContextEntry, 'seq'>;
    call?: ChatCallRecord;
  }): Promise<TranscriptMessage>;
  finishTurn(input: {
    turnId: string;
    status: 'complete' | 'error' | 'cancelled';
    error?: { code: string; message: string };
  }): Promise<Turn>;
  /**
   * Ends a turn that completed (waiting for the WAL flush, as finishTurn) and takes the runner's next step (nextTurn)
   * in the same transaction: one round trip between two turns. `context` is the thread's context right after the
   * turn, before any next turn's start (no auto-recall: the fold decision's read); null when the thread is gone.
   * With `startNext` false (a process that is closing) the step starts nothing and only releases the lease.
   */
  completeTurn(input: {
    turnId: string;
    threadId: string;
    owner: string;
    ttlMs: number;
    startNext?: boolean;
  }): Promise<{ turn: Turn; context: ThreadContext | null; next: NextTurn }>;
  hasQueuedTurns(threadId: string): Promise<boolean>;
  /** True when a turn of the thread is running (with `turnId`: that turn). Stop asks other processes only then. */
  hasRunningTurn(threadId: string, turnId?: string): Promise<boolean>;
  /** Threads with queued or running turns and no live lease (for the sweeper). */
  threadsWithStrandedTurns(limit: number): Promise<string[]>;
  /**
   * The sweeper's step for a thread of a dead lease (nothing while a live lease is held): each running turn ends with
   * `error`; with `resume`, one that is not itself a re-run is queued again in its place (a new turn, its answers so
   * far superseded), else its answer shows `error` (its streaming message, or an error answer appended).
   * Returns the new turns' ids and the ids of the turns that ended for good.
   */
  recoverInterruptedTurns(input: {
    threadId: string;
    resume: boolean;
    error: ErrorBody;
  }): Promise<{ resumed: string[]; failed: string[] }>;
}
