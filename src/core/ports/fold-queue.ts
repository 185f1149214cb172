export interface FoldQueue {
  /** Enqueues a fold for the thread (deduplicated per thread). Fails fast when Redis is down. */
  enqueueFold(threadId: string, reason: string, force?: boolean): Promise<string | null>;
}
