import type { TranscriptMessage } from '../domain/types';

/** One transcript message found by search, with its rank score (higher is better). */
export interface TranscriptMatch {
  messageId: string;
  seq: number;
  role: TranscriptMessage['role'];
  content: string;
  createdAt: Date;
  score: number;
}

/** A match in another thread of the same user (cross-thread search), with the thread it is in. */
export interface ElsewhereMatch extends TranscriptMatch {
  threadId: string;
  threadTitle: string;
}

/** A search hit for people: the message, its thread and a snippet with the matched words marked. */
export interface MessageSearchHit {
  threadId: string;
  threadTitle: string;
  messageId: string;
  seq: number;
  role: TranscriptMessage['role'];
  createdAt: Date;
  snippet: string;
  /** [start, end) character ranges of `snippet` that matched the query. */
  highlights: { start: number; end: number }[];
  /** A fork's copy of a message of the thread it was branched from (that thread lists its own once too). */
  forkCopy: boolean;
}

/**
 * Full-text search of transcripts (Postgres tsvector + GIN, written when a message completes). Never returns
 * forgotten, superseded or unfinished messages, nor another thread's.
 */
export interface TranscriptSearch {
  /**
   * The model's search of its own thread: the best matches from the thread's context start on (before
   * `beforeSeq` when given), best first.
   */
  searchForModel(input: {
    threadId: string;
    query: string;
    limit: number;
    beforeSeq?: number;
  }): Promise<TranscriptMatch[]>;
  /**
   * The model's search of the owner's other threads (issue 27), best first on a score over the user's corpus: never
   * another user's, a deleted thread, a forgotten message or the thread's own fork family; fork copies once. Empty
   * when the thread's recall scope (its setting, else `defaultScope`) is `thread`.
   */
  searchElsewhere(input: {
    threadId: string;
    query: string;
    limit: number;
    defaultScope: 'thread' | 'user';
  }): Promise<ElsewhereMatch[]>;
  /** Messages of the given seqs (neighbouring turns shown with a match), ascending; unsearchable ones left out. */
  messagesAt(input: { threadId: string; seqs: number[] }): Promise<TranscriptMatch[]>;
  /** People's search across the owner's threads (or one of them), best first, a page at a time. */
  searchForPeople(input: {
    ownerId: string;
    threadId?: string;
    query: string;
    limit: number;
    offset: number;
  }): Promise<{ hits: MessageSearchHit[]; hasMore: boolean }>;
}
