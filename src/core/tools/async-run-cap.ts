/** The caps `ToolRunStore.createRun` enforces atomically: the running runs of a thread and of its owner. */
export interface AsyncRunCaps {
  ownerId: string;
  /** MAX_ASYNC_RUNS_PER_THREAD. */
  perThread: number;
  /** MAX_ASYNC_RUNS_PER_USER. */
  perUser: number;
}

/** Thrown by `createRun` when a cap is reached: counted and refused under the owner's lock, never exceeded. */
export class AsyncRunCapReached extends Error {
  override name = 'AsyncRunCapReached';
  constructor(readonly which: 'thread' | 'user') {
    super(`the ${which}'s background tool runs are at their cap`);
  }
}
