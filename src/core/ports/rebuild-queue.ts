/** Summary rebuilds run as jobs of the summary queue (long: many summarizer calls). */
export interface RebuildQueue {
  /** Enqueues a rebuild of the thread's summary (deduplicated per thread); returns the job id. */
  enqueueRebuild(input: { threadId: string; actorId: string }): Promise<string | null>;
}
