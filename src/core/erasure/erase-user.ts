import type { ErasureRecord, ErasureStore, LogPort } from '../ports';

export interface EraseUserDeps {
  store: ErasureStore;
  /** Stops the turns running in this process for a thread (the others find the thread gone and stop). */
  cancelTurns(threadId: string): void;
  /**
   * Tells the other side of these runs' background work (MCP tasks, external runners) to stop, while their rows
   * still say what to cancel; returns how many cancels were sent.
   */
  cancelRemoteWork(runIds: string[]): Promise<number>;
  /** Disconnects the user's sockets in every process (the per-user room). */
  disconnect(userId: string): Promise<void>;
  /** Deletes the user's rate-limit keys and other per-user Redis state. */
  forgetEphemeral(userId: string): Promise<void>;
  /**
   * Removes the queued and finished jobs naming these threads or runs (folds, idle folds, rebuilds, tool runs and
   * polls); returns how many. A job running meanwhile is not removed: it finds its thread gone and ends as a no-op.
   */
  removeJobs(refs: { threadIds: string[]; runIds: string[] }): Promise<number>;
  log: LogPort;
}

/**
 * Erases a user (DELETE /api/me, DELETE /api/admin/users/:userId, the retention sweep): their turns are stopped,
 * the background work of their tool runs elsewhere is told to stop,
 * everything they own is deleted in one transaction with a tombstone, their sockets are disconnected and their
 * Redis state (rate limits) and their jobs removed. Idempotent: erasing an erased user refreshes only the tombstone.
 * A job running meanwhile ends as a no-op (every processor finds its thread gone). With Redis down the erasure
 * still completes (Postgres is the record): the jobs left then end as no-ops too, and finished ones expire.
 */
export async function eraseUser(
  input: { userId: string; kind: 'guest' | 'external' },
  deps: EraseUserDeps,
): Promise<{ existed: boolean; threads: number }> {
  const [threadIds, runIds] = await Promise.all([
    deps.store.threadIdsOf(input.userId),
    deps.store.toolRunIdsOf(input.userId),
  ]);
  for (const threadId of threadIds) deps.cancelTurns(threadId);
  await deps
    .cancelRemoteWork(runIds)
    .catch((error: unknown) =>
      deps.log.warn({ err: error, userId: input.userId }, "could not cancel an erased user's background tool work"),
    );
  const outcome = await deps.store.erase(input);
  // After the erase: a turn stopping meanwhile may still have scheduled its thread's idle fold.
  const jobs = await deps.removeJobs({ threadIds, runIds }).catch((error: unknown) => {
    deps.log.warn({ err: error, userId: input.userId }, "could not remove an erased user's jobs");
    return 0;
  });
  await deps
    .disconnect(input.userId)
    .catch((error: unknown) =>
      deps.log.warn({ err: error, userId: input.userId }, "could not disconnect an erased user's sockets"),
    );
  await deps
    .forgetEphemeral(input.userId)
    .catch((error: unknown) =>
      deps.log.warn({ err: error, userId: input.userId }, "could not delete an erased user's Redis keys"),
    );
  deps.log.info({ userId: input.userId, threads: outcome.threads, jobs, existed: outcome.existed }, 'user erased');
  return outcome;
}

/** Whether a token issued at `issuedAtMs` (its `iat`) of a user of `kind` is refused after `erasure`. */
export function refusedAfterErasure(
  erasure: ErasureRecord | null,
  token: { issuedAtMs: number; kind: 'guest' | 'external' },
): boolean {
  if (!erasure) return false;
  // A guest never comes back; a host-minted user only with a token issued after the erasure (iat has seconds).
  return token.kind === 'guest' || erasure.kind === 'guest' || token.issuedAtMs <= erasure.erasedAt.getTime();
}
