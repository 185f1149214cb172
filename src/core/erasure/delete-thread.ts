import type { LogPort } from '../ports';

/** What deleting a thread needs besides the store's delete (the same cleanup as an erasure, for one thread). */
export interface DeleteThreadDeps {
  /** The ids of the thread's tool runs (tool jobs name a run, not a thread). */
  toolRunIdsOf(threadId: string): Promise<string[]>;
  /** Deletes the thread; its model-call records stay, detached (ThreadStore.deleteThread). */
  deleteThread(threadId: string): Promise<void>;
  /** Stops the turns running in this process for the thread (the others find the thread gone and stop). */
  cancelTurns(threadId: string): void;
  /** Tells the other side of these runs' background work (MCP tasks, external runners) to stop; returns how many. */
  cancelRemoteWork(runIds: string[]): Promise<number>;
  /** Removes the queued and finished jobs naming the thread or its runs (folds, idle folds, tool runs and polls). */
  removeJobs(refs: { threadIds: string[]; runIds: string[] }): Promise<number>;
  log: LogPort;
}

/**
 * Deletes a thread (DELETE /api/threads/:id) as an erasure deletes a user's: its turns are stopped, the background
 * work of its tool runs elsewhere is told to stop while their rows still say what to cancel, the thread goes (its
 * call records stay for the costs), then its jobs are removed, so no fold or tool job of it is left queued. A job
 * running meanwhile finds its thread gone and ends as a no-op; with Redis down the delete still completes.
 */
export async function deleteThread(threadId: string, deps: DeleteThreadDeps): Promise<void> {
  const runIds = await deps.toolRunIdsOf(threadId);
  deps.cancelTurns(threadId);
  await deps
    .cancelRemoteWork(runIds)
    .catch((error: unknown) =>
      deps.log.warn({ err: error, threadId }, "could not cancel a deleted thread's background tool work"),
    );
  await deps.deleteThread(threadId);
  // After the delete: a turn stopping meanwhile may still have scheduled the thread's idle fold.
  const jobs = await deps.removeJobs({ threadIds: [threadId], runIds }).catch((error: unknown) => {
    deps.log.warn({ err: error, threadId }, "could not remove a deleted thread's jobs");
    return 0;
  });
  deps.log.info({ threadId, jobs, toolRuns: runIds.length }, 'thread deleted');
}
