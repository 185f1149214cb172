import type { z } from 'zod';
import type { HandlerContext } from '../acknowledged';
import { roomOf } from '../socket-types';
import type { threadLeavePayload } from '../socket-schemas';

/** `thread-leave`: stops this socket's events of the thread (leaving a room it is not in is fine). */
export async function threadLeave({
  socket,
  payload,
}: HandlerContext<z.infer<typeof threadLeavePayload>>): Promise<Record<string, never>> {
  await socket.leave(roomOf(payload.threadId));
  return {};
}
