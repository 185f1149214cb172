import type { JobType, Queue } from 'bullmq';

/** Every state a job can be found in but `active` (a running job is locked: it ends as a no-op, its thread gone). */
const REMOVABLE_STATES: JobType[] = ['waiting', 'prioritized', 'delayed', 'waiting-children', 'completed', 'failed'];

/** Jobs read from Redis at a time while scanning a state. */
const PAGE = 500;

/** The ids a job's payload may name: summary jobs name a thread, tool jobs a run. */
interface JobPayloadIds {
  threadId?: unknown;
  runId?: unknown;
}

/**
 * Removes every job of `queues` whose payload names one of `threadIds` or `runIds` (an erased user's: issue 27), in
 * every state but active: queued, delayed (idle folds, tool polls) and the finished ones kept for admins (a failed
 * job's reason may quote a provider's error). Scans each state's list once, then removes what matched; returns how
 * many were removed. Erasure is rare, and the lists hold ids only, so a scan is cheap next to an index to keep.
 */
export async function removeJobsOf(input: {
  queues: Queue[];
  threadIds: readonly string[];
  runIds: readonly string[];
}): Promise<number> {
  const threads = new Set(input.threadIds);
  const runs = new Set(input.runIds);
  if (threads.size === 0 && runs.size === 0) return 0;
  let removed = 0;
  for (const queue of input.queues) {
    const matching = new Set<string>();
    for (const state of REMOVABLE_STATES) {
      for (let start = 0; ; start += PAGE) {
        const jobs = await queue.getJobs([state], start, start + PAGE - 1, true);
        for (const job of jobs) {
          const data = (job.data ?? {}) as JobPayloadIds;
          const names =
            (typeof data.threadId === 'string' && threads.has(data.threadId)) ||
            (typeof data.runId === 'string' && runs.has(data.runId));
          if (names && job.id) matching.add(job.id);
        }
        if (jobs.length < PAGE) break;
      }
    }
    // Removed after the scan, so the pages above were not shifted under it; a job that became active meanwhile stays.
    for (const jobId of matching) removed += await queue.remove(jobId);
  }
  return removed;
}
