import type { Thread } from '../domain/types';
import { toThreadDto } from '../dto/api-dto';
import { AppError } from '../errors/app-error';
import type { MemoryActor, MemoryDeps } from './memory-deps';
import { requestRebuild } from './request-rebuild';
import { isSummaryWithdrawn } from '../domain/types';
import { threadForActor } from './thread-for-actor';

export interface ContextResetOutcome {
  /** The context start after the call: the model sees nothing before this seq (the divider sits before it). */
  seq: number;
  thread: Thread;
}

function publish(deps: MemoryDeps, thread: Thread): void {
  deps.events.publish({ type: 'context-reset', threadId: thread.id, seq: thread.contextStartSeq });
  deps.events.publish({ type: 'thread-updated', threadId: thread.id, thread: toThreadDto(thread) });
}

/**
 * "Start a new context here": the transcript stays as it is, but the model sees nothing before the next message.
 * The summary is closed (its revision stays in the history, its text leaves the pack), the window and the pins
 * before the marker leave the pack. Undoable until the next message.
 */
export async function resetContext(
  input: { actor: MemoryActor; threadId: string },
  deps: MemoryDeps,
): Promise<ContextResetOutcome> {
  const thread = await threadForActor(deps, input.threadId, input.actor);
  const updated = await deps.memory.resetContext(thread.id);
  publish(deps, updated);
  return { seq: updated.contextStartSeq, thread: updated };
}

/** Undoes the last fresh context, until the next message (CONFLICT after it). */
export async function undoContextReset(
  input: { actor: MemoryActor; threadId: string },
  deps: MemoryDeps,
): Promise<ContextResetOutcome> {
  const thread = await threadForActor(deps, input.threadId, input.actor);
  const restored = await deps.memory.undoContextReset(thread.id);
  if (!restored)
    throw new AppError(
      'CONFLICT',
      'There is no fresh context to undo: a message was sent after it, or it was undone already.',
    );
  // A message forgotten while the context was fresh may have withdrawn the summary being restored.
  if (isSummaryWithdrawn(restored)) await requestRebuild(deps, restored);
  publish(deps, restored);
  return { seq: restored.contextStartSeq, thread: restored };
}
