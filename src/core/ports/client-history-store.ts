import type { TranscriptMessage } from '../domain/types';

/**
 * A message of a thread as the history matching reads it: the transcript row with its place in the chain of hashes
 * over the thread's client view (written by the database when the message takes its seq, completes, or is forgotten).
 */
export interface ClientViewRow {
  message: TranscriptMessage;
  /** The chain through this message's item, its answer taken as ending here; null: not seen by a client, or not known yet. */
  prefixHash: Uint8Array | null;
  /**
   * The first seq of the answer this assistant message (or saved memory's note) is part of (of the one still open, for
   * a hidden message).
   */
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

/** A tool call as an OpenAI client sends it back in an assistant message of its history. */
export interface ClientToolCall {
  id: string;
  name: string;
  /** The arguments as the JSON text the client received. */
  arguments: string;
}

/** One message of a stateless client's history (system messages taken out: they are the client's instructions). */
export type ClientMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls: ClientToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };
