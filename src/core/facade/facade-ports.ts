import type { OpenAIClientSettings, TranscriptMessage } from '../domain';
import type { ClientMessage } from './client-view';

/** One thread a conversation key reached. */
export interface ConversationBranch {
  threadId: string;
  /** The last characters (up to BRANCH_TAIL_CHARS) of its last user or assistant text; null when it has none. */
  lastTextTail: string | null;
}

/** How much of a branch's last text the store returns as its hint. */
export const BRANCH_TAIL_CHARS = 256;

/** What the OpenAI-compatible route needs from the store besides the thread, turn and memory ports. */
export interface FacadeConversationStore {
  /**
   * The threads a client's conversation key reached for this user (the first one and the forks made for it), the most
   * recently active first, each with the end of the last text a client saw in it (a hint of the branch a history goes on).
   */
  threadsOf(input: { userId: string; clientKey: string; limit: number }): Promise<ConversationBranch[]>;
  /** Records that the conversation key reached this thread (idempotent). */
  link(input: { userId: string; clientKey: string; threadId: string }): Promise<void>;
  /**
   * Sets what the OpenAI client sends with every request (`settings.openaiClient`: its system message and tools),
   * bumping the thread's version only when it changes.
   */
  setClientSettings(input: { threadId: string; settings: OpenAIClientSettings }): Promise<void>;
  /**
   * What the upstream model reported for the calls that produced the turn's messages, summed (tool rounds and an
   * overflow retry included); zeros when it reported nothing.
   */
  usageOfTurn(turnId: string): Promise<{ promptTokens: number; completionTokens: number; cachedTokens: number | null }>;
  /**
   * Marks the turn to be cancelled when it starts, if it is still queued (its client went away): it then starts only
   * to end as cancelled, its user message taking its seq, without calling the model. False when it is not queued.
   */
  cancelQueuedTurn(turnId: string): Promise<boolean>;
  /** The history matching's reads (see ClientHistoryStore). */
  history: ClientHistoryStore;
}

/**
 * A message of a thread as the history matching reads it: the transcript row with its place in the chain of hashes
 * over the thread's client view (written by the database when the message takes its seq, completes, or is forgotten).
 */
export interface ClientViewRow {
  message: TranscriptMessage;
  /** The chain through this message's item, its answer taken as ending here; null: not seen by a client, or not known yet. */
  prefixHash: Uint8Array | null;
  /** The first seq of the answer this assistant message is part of (of the one still open, for a hidden message). */
  answerFrom: number | null;
}

/** Where a history's chain hash was found: the message whose prefixHash it is. */
export interface PrefixHit {
  seq: number;
  role: string;
  prefixHash: Uint8Array;
  answerFrom: number | null;
}

/**
 * What the OpenAI-compatible route reads to match a client's history with a thread, a bounded number of messages per
 * request: the client's history is hashed the way the database hashes a thread's client view, the longest common part
 * is found by its hash, and only the messages around the point where the two part are read.
 */
export interface ClientHistoryStore {
  /**
   * The chain hashes of the client's messages from index `from` on (element i: through messages[from + i]), chained
   * from `base`, the stored chain through the message before `from` (null when `from` is 0).
   */
  chainHashes(input: { messages: readonly ClientMessage[]; from: number; base: Uint8Array | null }): Uint8Array[];
  /** Of the thread's messages in (afterSeq, throughSeq] whose prefixHash is one of `hashes`: the greatest seq's. */
  findPrefix(input: {
    threadId: string;
    hashes: readonly Uint8Array[];
    afterSeq: number;
    throughSeq: number;
  }): Promise<PrefixHit | null>;
  /** The thread's messages with seqs fromSeq through throughSeq, in seq order, at most `limit`. */
  readRows(input: { threadId: string; fromSeq: number; throughSeq: number; limit: number }): Promise<ClientViewRow[]>;
  /** Whether a message a client sees (a user message, an answer, a client tool's result) is being written. */
  writing(threadId: string): Promise<boolean>;
  /** Whether a user message a client sees has a seq in (afterSeq, throughSeq]. */
  userAfter(input: { threadId: string; afterSeq: number; throughSeq: number }): Promise<boolean>;
}
