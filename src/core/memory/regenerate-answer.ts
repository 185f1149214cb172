import type { TranscriptMessage, Turn } from '../domain/types';
import { toMessageDto } from '../dto/api-dto';
import { AppError } from '../errors/app-error';
import type { MemoryActor, MemoryDeps } from './memory-deps';
import { threadForActor } from './thread-for-actor';
import { spendOrRefuse } from '../turn/spend-or-refuse';

export interface RegenerateOutcome {
  turn: Turn;
  userMessage: TranscriptMessage;
  /** The answers replaced: they stay in the transcript marked superseded and left the window. */
  superseded: TranscriptMessage[];
}

/**
 * Answers the thread's last user message again: its answers are marked superseded and leave the window (the model
 * never sees both), and a `regenerate` turn is queued; the caller kicks the turn runner. BUSY while a turn runs;
 * a user's regeneration spends from the send rate limit.
 */
export async function regenerateAnswer(
  input: { actor: MemoryActor; threadId: string },
  deps: MemoryDeps,
): Promise<RegenerateOutcome> {
  const thread = await threadForActor(deps, input.threadId, input.actor);
  const userMessage = await deps.memory.lastUserMessage(thread.id);
  if (!userMessage) throw new AppError('CONFLICT', 'There is no message to answer again.');
  if (userMessage.seq !== null && userMessage.seq < thread.contextStartSeq) {
    throw new AppError('CONFLICT', 'The last message is before the fresh context; send a new one.');
  }
  if (!input.actor.admin) await spendOrRefuse(deps.sendLimiter, input.actor.userId);
  const { turn, superseded } = await deps.memory.queueRegenerate({
    threadId: thread.id,
    userMessageId: userMessage.id,
  });
  for (const message of superseded)
    deps.events.publish({ type: 'message-updated', threadId: thread.id, message: toMessageDto(message) });
  return { turn, userMessage, superseded };
}
