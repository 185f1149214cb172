import type { z } from 'zod';
import { AppError } from '../../core/errors/app-error';
import type { HandlerContext } from '../acknowledged';
import type { SocketDeps } from '../socket-deps';
import type { turnCancelPayload } from '../socket-schemas';

/**
 * `turn-cancel`: stops the answer streaming on the caller's thread; the partial answer is kept as `cancelled`.
 * `cancelled: false` when no turn of the thread runs in any process (as `POST /api/threads/:id/cancel`).
 */
export async function turnCancel(
  deps: SocketDeps,
  { userId, payload }: HandlerContext<z.infer<typeof turnCancelPayload>>,
): Promise<{ cancelled: boolean }> {
  const thread = await deps.threads.findThread(payload.threadId, userId);
  if (!thread) throw new AppError('NOT_FOUND', 'No such thread.');
  return { cancelled: deps.cancelTurn ? await deps.cancelTurn(thread.id) : deps.runner.cancel(thread.id) };
}
