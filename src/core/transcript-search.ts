import type { TranscriptMessage } from './domain';

/** One transcript message found by search, with its rank score (higher is better). */
export interface TranscriptMatch {
  messageId: string;
  seq: number;
  role: TranscriptMessage['role'];
  content: string;
  createdAt: Date;
  score: number;
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
  searchForModel(input: { threadId: string; query: string; limit: number; beforeSeq?: number }): Promise<TranscriptMatch[]>;
  /** Messages of the given seqs (neighbouring turns shown with a match), ascending; unsearchable ones left out. */
  messagesAt(input: { threadId: string; seqs: number[] }): Promise<TranscriptMatch[]>;
  /** People's search across the owner's threads (or one of them), best first, a page at a time. */
  searchForPeople(input: { ownerId: string; threadId?: string; query: string; limit: number; offset: number }): Promise<{ hits: MessageSearchHit[]; hasMore: boolean }>;
}
