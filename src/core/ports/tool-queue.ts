export interface ToolQueue {
  /** Enqueues the run's job (payload: the run id; deduplicated per run). Fails fast when Redis is down. */
  enqueueToolRun(runId: string): Promise<void>;
  /** Enqueues the next poll of submitted background work, after `delayMs`. */
  enqueuePoll(runId: string, delayMs: number): Promise<void>;
}
