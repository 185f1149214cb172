/** Background rebuilds of a summary withdrawn by a forget (summary queue). */
export interface ForgetRebuildQueue {
  /** One job per withdrawal (`version` is the thread's version after it), so a running rebuild never swallows it. */
  enqueueForgetRebuild(input: { threadId: string; version: number }): Promise<string | null>;
}
