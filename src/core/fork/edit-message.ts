import type { Thread } from '../domain';
import { AppError } from '../errors';
import type { AcceptedMessage } from '../ports';
import { prepareUserMessage } from '../turn/send-message';
import type { EditDeps } from './fork-deps';
import { assertForkSize, writeFork } from './fork-thread';

export interface EditOutcome {
  /** The fork that holds the edited message (the parent keeps the original). */
  thread: Thread;
  accepted: AcceptedMessage;
}

/**
 * Edits a sent user message (POST /api/threads/:id/messages/:messageId/edit, socket `message-edit`): forks the thread
 * just before it, then sends the new text in the fork as its next turn, through the send's checks (rate limit,
 * validation, queue bound). Nothing is written when a check fails. A repeated `clientMessageId` answers with the fork
 * and message of the first edit (`duplicate: true`). The caller kicks the fork's turn.
 */
export async function editMessage(input: { userId: string; threadId: string; messageId: string; content: unknown; clientMessageId?: unknown }, deps: EditDeps): Promise<EditOutcome> {
  const parent = await deps.threads.findThread(input.threadId, input.userId);
  if (!parent) throw new AppError('NOT_FOUND', 'No such thread.');
  const message = await deps.transcript.findMessage(parent.id, input.messageId);
  if (!message || message.role !== 'user') throw new AppError('NOT_FOUND', 'No such user message in this thread.');
  if (message.deleted) throw new AppError('CONFLICT', 'This message was deleted.');
  if (message.seq === null) throw new AppError('CONFLICT', 'This message is still waiting for its turn; cancel it or wait, then edit.');
  // A repeated edit answers with its first fork (the send's checks still apply, as for a repeated send).
  const earlier = typeof input.clientMessageId === 'string' ? await deps.forks.findForkByClientMessageId({ parentId: parent.id, clientMessageId: input.clientMessageId }) : null;
  const repeated = earlier ? await deps.threads.findThread(earlier, input.userId) : null;
  if (repeated) {
    const prepared = await prepareUserMessage(input, deps);
    return { thread: repeated, accepted: await deps.turns.acceptUserMessage({ threadId: repeated.id, ownerId: input.userId, ...prepared, maxQueued: deps.maxQueuedTurns }) };
  }
  // A fork the user has no room for, or too large to copy, is refused before the send spends from the rate limit.
  assertForkSize(message.seq - 1, deps.maxForkMessages);
  await deps.guards.beforeNewThread(input.userId);
  const prepared = await prepareUserMessage(input, deps);
  const thread = await writeFork({ parent, throughSeq: message.seq - 1 }, deps);
  const accepted = await deps.turns.acceptUserMessage({ threadId: thread.id, ownerId: input.userId, ...prepared, maxQueued: deps.maxQueuedTurns });
  deps.log.info({ threadId: parent.id, forkId: thread.id, editedSeq: message.seq }, 'message edited in a fork');
  return { thread, accepted };
}
