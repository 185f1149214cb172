import type { z } from 'zod';
import { toMessageDto, toThreadDto } from '../../core/dto/api-dto';
import { editMessage } from '../../core/fork';
import type { MessageDto, ThreadDto } from '../../shared/api';
import type { HandlerContext } from '../acknowledged';
import type { SocketDeps } from '../socket-deps';
import type { messageEditPayload } from '../socket-schemas';

/**
 * `message-edit`: forks the thread just before the user message and sends the new text in the fork (the REST use
 * case), acks like `message-send` with the fork, and starts the fork's turn without waiting for it: join the fork's
 * room to see the answer stream. A repeated clientMessageId acks the first edit (`duplicate: true`).
 */
export async function messageEdit(
  deps: SocketDeps,
  { userId, payload }: HandlerContext<z.infer<typeof messageEditPayload>>,
): Promise<{ thread: ThreadDto; message: MessageDto; turnId: string; duplicate: boolean }> {
  const { thread, accepted } = await editMessage(
    {
      userId,
      threadId: payload.threadId,
      messageId: payload.messageId,
      content: payload.content,
      clientMessageId: payload.clientMessageId,
    },
    deps.fork,
  );
  if (!accepted.duplicate) void deps.runner.kick(thread.id);
  return {
    thread: toThreadDto(thread),
    message: toMessageDto(accepted.message),
    turnId: accepted.turn.id,
    duplicate: accepted.duplicate,
  };
}
