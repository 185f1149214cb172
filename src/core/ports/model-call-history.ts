import type { ModelCallListDto } from '../../shared/api';

/** Read model of a thread's model calls for the admin tokens chart. */
export interface ModelCallHistory {
  /**
   * The newest `limit` calls before `before` (a cursor of a previous page; absent: the newest of all), oldest first
   * within the page, with the cursor of the page before them.
   */
  listForThread(input: { threadId: string; before?: string; limit: number }): Promise<ModelCallListDto>;
  /** The newest `limit` chat calls of `model` with a usage report: estimated and reported prompt tokens, oldest first. */
  recentPromptCounts(input: {
    model: string;
    limit: number;
  }): Promise<{ estimated: number; reported: number; ownerId: string | null }[]>;
}
