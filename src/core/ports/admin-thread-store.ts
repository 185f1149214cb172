import type { Page } from './page';

/** One row of the admin's thread list: the thread, its owner and its context health. */
export interface AdminThreadRow {
  id: string;
  title: string;
  ownerId: string;
  ownerKind: 'guest' | 'external';
  createdAt: Date;
  lastActivityAt: Date;
  memoryMode: 'summary' | 'window-only';
  messageCount: number;
  summaryPreview: string;
  summaryTokens: number;
  summaryRevision: number;
  coveredThroughSeq: number;
  windowEntries: number;
  windowTokens: number;
  /** Window entries the next fold would fold: beyond the keep policy, counted only while the trigger fires. */
  foldLagEntries: number;
  lastFoldAt: Date | null;
  lastFoldError: string | null;
}

export type AdminThreadSort = 'activity' | 'summary' | 'lag' | 'errors';

/** The deployment's fold policy in the form the admin list's SQL evaluates (any trigger condition fires). */
export interface FoldLagPolicy {
  minWindowTokens: number;
  minWindowMessages: number;
  keep: { kind: 'messages' | 'tokens'; value: number };
}

export interface AdminThreadStore {
  /** All users' threads, filtered by `query` (title, owner id or thread id), sorted descending by `sort`. */
  listThreads(input: {
    query?: string;
    cursor?: string;
    limit: number;
    sort: AdminThreadSort;
    policy: FoldLagPolicy;
  }): Promise<Page<AdminThreadRow>>;
  /** Size of a thread's transcript. */
  transcriptSize(threadId: string): Promise<{ messages: number; tokens: number; characters: number; lastSeq: number }>;
}
