import type { z } from 'zod';
import { toMessageDto } from '../../core/dto/api-dto';
import { sendMessage, sendMessageDepsOf } from '../../core/turn/send-message';
import type { MessageDto } from '../../shared/api';
import type { HandlerContext } from '../acknowledged';
import type { SocketDeps } from '../socket-deps';
import type { messageSendPayload } from '../socket-schemas';

/**
 * `message-send`: stores the user message and queues its turn (the REST use case), acks with the stored
 * message, and starts the turn without waiting for it; the answer streams to the thread's room.
 * A repeated clientMessageId acks the original message (`duplicate: true`) and starts nothing.
 */
export async function messageSend(
  deps: SocketDeps,
  { userId, payload }: HandlerContext<z.infer<typeof messageSendPayload>>,
): Promise<{ message: MessageDto; turnId: string; duplicate: boolean }> {
  const accepted = await sendMessage(
    { userId, threadId: payload.threadId, content: payload.content, clientMessageId: payload.clientMessageId },
    sendMessageDepsOf(deps),
  );
  // Not awaited: the turn streams to the room. A kick for a duplicate is harmless but also pointless.
  if (!accepted.duplicate) void deps.runner.kick(payload.threadId);
  return { message: toMessageDto(accepted.message), turnId: accepted.turn.id, duplicate: accepted.duplicate };
}
