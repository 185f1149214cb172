export interface SummaryCommit {
  threadId: string;
  /** The thread version the fold was planned against (compare-and-set). */
  expectedVersion: number;
  author: 'fold' | 'overflow-fallback' | 'rebuild' | 'admin';
  authorId?: string | null;
  text: string;
  /** Where each segment of `text` ends (core/summary/summary-segments); `[text.length]` for one segment. */
  segmentEnds: number[];
  tokens: number;
  encoding: string;
  fromSeq: number;
  throughSeq: number;
  /** Window seqs folded out by this commit. */
  foldedSeqs: number[];
  model: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  durationMs: number | null;
  identifiersKept: number | null;
  identifiersTotal: number | null;
}

export interface SummaryRevisionRecord {
  revision: number;
  author: SummaryCommit['author'];
  authorId: string | null;
  text: string;
  /** The text's segment ends; empty on revisions stored before segments (one segment). */
  segmentEnds: number[];
  tokens: number;
  fromSeq: number;
  throughSeq: number;
  model: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  durationMs: number | null;
  identifiersKept: number | null;
  identifiersTotal: number | null;
  redacted: boolean;
  createdAt: Date;
}

export interface SummaryStore {
  /** Commits a new revision and folds entries out of the window atomically; false when the thread's version moved. */
  commit(commit: SummaryCommit): Promise<{ committed: true; revision: number } | { committed: false }>;
  recordFoldError(threadId: string, message: string | null): Promise<void>;
  listRevisions(threadId: string): Promise<SummaryRevisionRecord[]>;
  /**
   * Thread ids whose state needs a fold (the sweeper's query): under the thread's own trigger when it has one
   * (a `fraction` of `maxInputTokens`), else under the deployment's thresholds.
   */
  threadsNeedingFold(input: {
    limit: number;
    minWindowTokens: number;
    minWindowMessages: number;
    maxInputTokens: number;
  }): Promise<string[]>;
}
