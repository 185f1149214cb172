import type { Thread } from '../domain';
import { AppError } from '../errors';
import type { AcceptedMessage } from '../ports';
import { prepareUserMessage } from '../turn/send-message';
import type { EditDeps } from './fork-deps';
import { FORK_BUSY, forkTitle } from './fork-thread';

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
  const prepared = await prepareUserMessage(input, deps);
  if (prepared.clientMessageId !== null) {
    const earlier = await deps.forks.findForkByClientMessageId({ parentId: parent.id, clientMessageId: prepared.clientMessageId });
    const thread = earlier ? await deps.threads.findThread(earlier, input.userId) : null;
    if (thread) {
      const accepted = await deps.turns.acceptUserMessage({ threadId: thread.id, ...prepared, maxQueued: deps.maxQueuedTurns });
      return { thread, accepted };
    }
  }
  await deps.guards.beforeNewThread(input.userId);
  const thread = await deps.forks.forkThread({ parentId: parent.id, throughSeq: message.seq - 1, title: forkTitle(parent.title) });
  if (!thread) throw new AppError('BUSY', FORK_BUSY);
  const accepted = await deps.turns.acceptUserMessage({ threadId: thread.id, ...prepared, maxQueued: deps.maxQueuedTurns });
  deps.log.info({ threadId: parent.id, forkId: thread.id, editedSeq: message.seq }, 'message edited in a fork');
  return { thread, accepted };
}
