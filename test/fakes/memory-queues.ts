import type {
  FoldQueue,
  ForgetRebuildQueue,
  IdleFoldQueue,
  RebuildQueue,
  TitleQueue,
  ToolQueue,
} from '../../src/core/ports';

/** The idle fold's delay in the fake (the real producer's default is PROMPT_CACHE_TTL's, five minutes). */
const IDLE_FOLD_DELAY_MS = 300_000;

export type QueueName = 'summary' | 'tools';

/** A job as the in-memory queues keep it (BullMQ's states, reduced to what the producers' contract observes). */
export interface MemoryJob {
  id: string;
  queue: QueueName;
  name: string;
  data: Record<string, unknown>;
  state: 'waiting' | 'delayed' | 'active' | 'completed' | 'failed';
  /** While a job of this id waits, is delayed or runs, an enqueue with the same id adds nothing. */
  deduplicationId: string | null;
  readyAt: number;
}

export interface MemoryQueues {
  folds: FoldQueue & RebuildQueue & ForgetRebuildQueue & IdleFoldQueue & TitleQueue;
  tools: ToolQueue;
  jobs: MemoryJob[];
  /** Redis is down: every enqueue fails (as the producers fail fast then). */
  down: boolean;
  /** Hands the queue's ready jobs (waiting, or delayed past their time) to `processor`: completed, or failed when it throws. */
  work(queue: QueueName, processor: (job: MemoryJob) => Promise<void>): Promise<MemoryJob[]>;
}

/**
 * The summary and tools queues in memory, with the producers' behaviour (test/contracts/queue.contract.ts holds
 * them to the BullMQ producers on real Redis): deduplication while a job is pending or running, delays, job ids.
 */
export function createMemoryQueues(): MemoryQueues {
  const counters: Record<QueueName, number> = { summary: 0, tools: 0 };
  const queues: MemoryQueues = {
    jobs: [],
    down: false,
    folds: {
      enqueueFold: async (threadId, reason, force = false) =>
        add('summary', 'fold', { threadId, reason, force }, { deduplicationId: `fold-${threadId}` }),
      enqueueForgetRebuild: async ({ threadId, version }) =>
        add(
          'summary',
          'forget-rebuild',
          { threadId, version },
          { deduplicationId: `forget-rebuild-${threadId}-${version}` },
        ),
      enqueueRebuild: async ({ threadId, actorId }) =>
        add('summary', 'rebuild', { threadId, actorId }, { deduplicationId: `rebuild-${threadId}` }),
      async scheduleIdleFold(threadId) {
        // One job per thread, pushed back while it waits (BullMQ's deduplication with `reschedule`).
        const id = add(
          'summary',
          'idle-fold',
          { threadId },
          { deduplicationId: `idle-fold-${threadId}`, delayMs: IDLE_FOLD_DELAY_MS },
        );
        const job = queues.jobs.find((candidate) => candidate.id === id && candidate.queue === 'summary');
        if (job?.state === 'delayed') job.readyAt = Math.max(job.readyAt, Date.now() + IDLE_FOLD_DELAY_MS);
      },
      async enqueueTitle(threadId) {
        add('summary', 'title', { threadId }, { deduplicationId: `title-${threadId}` });
      },
    },
    tools: {
      async enqueueToolRun(runId) {
        add('tools', 'run', { runId }, { deduplicationId: `run-${runId}` });
      },
      async enqueuePoll(runId, delayMs) {
        add('tools', 'poll', { runId }, { delayMs });
      },
    },
    async work(queue, processor) {
      const ready = queues.jobs.filter(
        (job) =>
          job.queue === queue && (job.state === 'waiting' || job.state === 'delayed') && job.readyAt <= Date.now(),
      );
      for (const job of ready) {
        job.state = 'active';
        try {
          await processor(job);
          job.state = 'completed';
        } catch {
          job.state = 'failed';
        }
      }
      return ready;
    },
  };

  function add(
    queue: QueueName,
    name: string,
    data: Record<string, unknown>,
    options: { deduplicationId?: string; delayMs?: number },
  ): string {
    if (queues.down) throw new Error('Redis did not answer');
    const deduplicationId = options.deduplicationId ?? null;
    const pending =
      deduplicationId === null
        ? undefined
        : queues.jobs.find(
            (job) => job.deduplicationId === deduplicationId && ['waiting', 'delayed', 'active'].includes(job.state),
          );
    if (pending) return pending.id;
    counters[queue] += 1;
    const delayMs = options.delayMs ?? 0;
    const job: MemoryJob = {
      id: String(counters[queue]),
      queue,
      name,
      data,
      deduplicationId,
      readyAt: Date.now() + delayMs,
      state: delayMs > 0 ? 'delayed' : 'waiting',
    };
    queues.jobs.push(job);
    return job.id;
  }
  return queues;
}
