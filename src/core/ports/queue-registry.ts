/** Job counts of one queue, as the admin API shows them. */
export interface QueueCounts {
  name: string;
  waiting: number;
  active: number;
  failed: number;
  delayed: number;
  completed: number;
}

/**
 * The queues admins see (`GET /api/admin/queues`, the bull-board dashboard). The composition root registers the
 * summary queue; other parts register theirs (e.g. the tools queue) with `register`. `TQueue`: the queue library's
 * queue (jobs/ implements it for BullMQ's), which the core never touches.
 */
export interface QueueRegistry<TQueue> {
  register(queue: TQueue): void;
  list(): TQueue[];
  /** Calls `listener` for every queue registered from now on (e.g. to add it to the dashboard). */
  onRegister(listener: (queue: TQueue) => void): void;
  /** Counts of every registered queue; rejects when Redis does not answer within `timeoutMs` (default 2000). */
  counts(timeoutMs?: number): Promise<QueueCounts[]>;
}
