import type { Thread } from '../domain/types';
import type { MemoryDeps } from './memory-deps';

/** Enqueues the rebuild of a withdrawn summary; when Redis is down, the sweeper enqueues it later. */
export async function requestRebuild(
  deps: Pick<MemoryDeps, 'jobs' | 'log'>,
  thread: Pick<Thread, 'id' | 'version'>,
): Promise<void> {
  await deps.jobs
    .enqueueForgetRebuild({ threadId: thread.id, version: thread.version })
    .catch((error: unknown) =>
      deps.log.warn({ err: error, threadId: thread.id }, 'could not enqueue the summary rebuild; the sweeper will'),
    );
}
