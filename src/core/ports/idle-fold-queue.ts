/** The fold of a thread once it has been idle longer than the provider's prompt cache lives (summary queue). */
export interface IdleFoldQueue {
  /**
   * Schedules the thread's idle fold at least PROMPT_CACHE_TTL from now (at most a tenth later: a push-back within that
   * time of the last one is skipped), pushing back the one already scheduled: one job per thread. Fails fast when
   * Redis is down.
   */
  scheduleIdleFold(threadId: string): Promise<void>;
}
