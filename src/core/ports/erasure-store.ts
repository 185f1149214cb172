/** A user's erasure as the store records it: tokens issued before `erasedAt` are refused; a guest never comes back. */
export interface ErasureRecord {
  erasedAt: Date;
  kind: 'guest' | 'external';
}

/** The writes and reads of erasure (issue 27); implemented by src/db/erasure-repository.ts. */
export interface ErasureStore {
  /** The user's tombstone, if erased. */
  erasureOf(userId: string): Promise<ErasureRecord | null>;
  /** The user's thread ids (forks included). */
  threadIdsOf(userId: string): Promise<string[]>;
  /** The ids of the tool runs of the user's threads (tool jobs name a run, not a thread). */
  toolRunIdsOf(userId: string): Promise<string[]>;
  /** The ids of one thread's tool runs. */
  toolRunIdsOfThread(threadId: string): Promise<string[]>;
  /**
   * Erases everything of the user in one transaction: running tool runs flagged cancelled first, then the user row
   * and by cascade the threads and forks, messages (and their search index), window and pins, summaries and their
   * revisions, turns, tool runs, saved memories; the model-call records stay for the costs, anonymised (no user, no
   * thread, no content); the admin audit rows about the user's threads lose their details (who and when stay); the
   * tombstone is written. `existed` false when the user
   * had no row (a tombstone is written all the same).
   */
  erase(input: { userId: string; kind: 'guest' | 'external' }): Promise<{ existed: boolean; threads: number }>;
}
