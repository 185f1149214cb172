import type { Thread, TranscriptMessage, Turn } from '../domain/types';
import { AppError } from '../errors/app-error';
import type { RateLimiter } from '../limits/rate-limiter';
import type { TranscriptStore, TurnStore } from '../ports';
import { spendOrRefuse } from './spend-or-refuse';

export interface RetryAnswerDeps {
  transcript: Pick<TranscriptStore, 'findMessage' | 'listTurnMessages'>;
  turns: Pick<TurnStore, 'queueTurn'>;
  /** The send limiter: a retry calls the model like a send, so it spends from the same budget. */
  sendLimiter: RateLimiter;
  maxQueuedTurns: number;
}

/**
 * Answers a user message again whose answer ended in error: through the send rate limit and the thread's queue
 * bound, like a send (N retries at once queue one turn, not N). The caller kicks the turn runner.
 */
export async function retryAnswer(
  input: { userId: string; thread: Thread; messageId: string },
  deps: RetryAnswerDeps,
): Promise<{ turn: Turn; message: TranscriptMessage }> {
  const message = await deps.transcript.findMessage(input.thread.id, input.messageId);
  if (!message || message.role !== 'user') throw new AppError('NOT_FOUND', 'No such user message in this thread.');
  if (!message.turnId) throw new AppError('CONFLICT', 'This message has no turn to retry.');
  const answers = await deps.transcript.listTurnMessages(message.turnId);
  const last = answers.at(-1);
  if (!last || last.status !== 'error')
    throw new AppError('CONFLICT', 'Only an answer that ended in error can be retried.');
  await spendOrRefuse(deps.sendLimiter, input.userId);
  const turn = await deps.turns.queueTurn({
    threadId: input.thread.id,
    kind: 'retry',
    userMessageId: message.id,
    maxQueued: deps.maxQueuedTurns,
  });
  return { turn, message };
}
