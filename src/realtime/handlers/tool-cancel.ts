import type { z } from 'zod';
import { AppError } from '../../core/errors/app-error';
import type { HandlerContext } from '../acknowledged';
import type { SocketDeps } from '../socket-deps';
import type { toolCancelPayload } from '../socket-schemas';

/** `tool-cancel`: cancels one of the caller's tool runs through the `cancelToolRun` seam (NOT_FOUND without it). */
export async function toolCancel(
  deps: SocketDeps,
  { userId, payload }: HandlerContext<z.infer<typeof toolCancelPayload>>,
): Promise<{ cancelled: boolean }> {
  if (!deps.cancelToolRun) throw new AppError('NOT_FOUND', 'No such tool run.');
  return { cancelled: await deps.cancelToolRun(payload.runId, userId) };
}
