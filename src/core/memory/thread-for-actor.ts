import type { Thread } from '../domain/types';
import { AppError } from '../errors/app-error';
import type { MemoryActor, MemoryDeps } from './memory-deps';

/** The thread if the actor may change it (its owner, or any admin); NOT_FOUND otherwise, as for a missing thread. */
export async function threadForActor(
  deps: Pick<MemoryDeps, 'threads'>,
  threadId: string,
  actor: MemoryActor,
): Promise<Thread> {
  const thread = await deps.threads.findThread(threadId, actor.admin ? null : actor.userId);
  if (!thread) throw new AppError('NOT_FOUND', 'No such thread.');
  return thread;
}
