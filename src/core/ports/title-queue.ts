/** Automatic titles made by the summarizer model run as jobs of the summary queue, off the answer's path. */
export interface TitleQueue {
  /** Enqueues the thread's title job (deduplicated per thread; the job is a no-op once the thread is titled). */
  enqueueTitle(threadId: string): Promise<void>;
}
