import type { Thread } from '../domain/types';
import { AppError } from '../errors/app-error';
import type { AcceptedMessage } from '../ports';
import { prepareUserMessage } from '../turn/send-message';
import type { EditDeps } from './fork-deps';
import { threadQuotaExceeded } from '../limits/thread-quota';
import { assertForkSize, FORK_BUSY, forkTitle } from './fork-thread';

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
export async function editMessage(
  input: { userId: string; threadId: string; messageId: string; content: unknown; clientMessageId?: unknown },
  deps: EditDeps,
): Promise<EditOutcome> {
  const parent = await deps.threads.findThread(input.threadId, input.userId);
  if (!parent) throw new AppError('NOT_FOUND', 'No such thread.');
  const message = await deps.transcript.findMessage(parent.id, input.messageId);
  if (!message || message.role !== 'user') throw new AppError('NOT_FOUND', 'No such user message in this thread.');
  if (message.deleted) throw new AppError('CONFLICT', 'This message was deleted.');
  if (message.seq === null)
    throw new AppError('CONFLICT', 'This message is still waiting for its turn; cancel it or wait, then edit.');
  // A repeated edit answers with its first fork (the send's checks still apply, as for a repeated send).
  const earlier =
    typeof input.clientMessageId === 'string'
      ? await deps.forks.findForkByClientMessageId({ parentId: parent.id, clientMessageId: input.clientMessageId })
      : null;
  const repeated = earlier ? await deps.threads.findThread(earlier, input.userId) : null;
  if (repeated) {
    const prepared = await prepareUserMessage(input, deps);
    return {
      thread: repeated,
      accepted: await deps.turns.acceptUserMessage({
        threadId: repeated.id,
        ownerId: input.userId,
        ...prepared,
        maxQueued: deps.maxQueuedTurns,
      }),
    };
  }
  // A fork the user has no room for, or too large to copy, is refused before the send spends from the rate limit.
  assertForkSize(message.seq - 1, deps.maxForkMessages);
  await deps.guards.beforeNewThread(input.userId);
  const prepared = await prepareUserMessage(input, deps);
  // The fork and its first turn in one transaction: a refused accept leaves no fork behind (it would count against
  // MAX_THREADS_PER_USER), and a concurrent edit with the same client id finds this one's fork instead of making one.
  const written = await deps.forks.forkWithMessage({
    parentId: parent.id,
    ownerId: parent.ownerId,
    throughSeq: message.seq - 1,
    title: forkTitle(parent.title),
    maxThreads: deps.maxThreadsPerUser,
    message: { ...prepared, maxQueued: deps.maxQueuedTurns },
  });
  if ('existing' in written) {
    const raced = await deps.threads.findThread(written.existing, input.userId);
    if (!raced) throw new AppError('NOT_FOUND', 'No such thread.');
    return {
      thread: raced,
      accepted: await deps.turns.acceptUserMessage({
        threadId: raced.id,
        ownerId: input.userId,
        ...prepared,
        maxQueued: deps.maxQueuedTurns,
      }),
    };
  }
  if ('refused' in written) {
    throw written.refused === 'quota'
      ? threadQuotaExceeded(written.owned, deps.maxThreadsPerUser, 'branch')
      : new AppError('BUSY', FORK_BUSY);
  }
  deps.log.info({ threadId: parent.id, forkId: written.thread.id, editedSeq: message.seq }, 'message edited in a fork');
  return written;
}
