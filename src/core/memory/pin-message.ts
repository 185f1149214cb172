import { toMessageDto } from '../dto/api-dto';
import type { TranscriptMessage } from '../domain/types';
import { AppError } from '../errors/app-error';
import { exchangeSeqsOf } from './exchange-seqs-of';
import type { MemoryActor, MemoryDeps } from './memory-deps';
import { threadForActor } from './thread-for-actor';

export interface PinOutcome {
  /** Every message whose pin changed. */
  messages: TranscriptMessage[];
  pinnedTokens: number;
  pinnedMaxTokens: number;
}

function assertPinnable(message: TranscriptMessage, contextStartSeq: number): void {
  if (message.seq === null)
    throw new AppError('CONFLICT', 'This message is still waiting for its turn; pin it once it is answered.');
  if (message.deleted) throw new AppError('CONFLICT', 'This message was deleted.');
  if (message.superseded) throw new AppError('CONFLICT', 'This answer was replaced by a regenerated one.');
  if (message.status !== 'complete' && message.status !== 'cancelled')
    throw new AppError('CONFLICT', 'Only a finished message can be pinned.');
  if (message.content === '' && (message.toolCalls?.length ?? 0) === 0)
    throw new AppError('CONFLICT', 'This message is empty.');
  if (message.seq < contextStartSeq)
    throw new AppError('CONFLICT', 'This message is before the fresh context; the model no longer sees it.');
}

async function messageOf(deps: MemoryDeps, threadId: string, messageId: string): Promise<TranscriptMessage> {
  const message = await deps.transcript.findMessage(threadId, messageId);
  if (!message) throw new AppError('NOT_FOUND', 'No such message in this thread.');
  return message;
}

function publishUpdated(deps: MemoryDeps, threadId: string, messages: TranscriptMessage[]): void {
  for (const message of messages)
    deps.events.publish({ type: 'message-updated', threadId, message: toMessageDto(message) });
}

/**
 * Pins a message (a whole tool exchange for a message of one): its context entry is never folded and every pack
 * carries it after the summary. Refused with CONFLICT when the thread's pinned tokens would pass the cap.
 */
export async function pinMessage(
  input: { actor: MemoryActor; threadId: string; messageId: string },
  deps: MemoryDeps,
): Promise<PinOutcome> {
  const thread = await threadForActor(deps, input.threadId, input.actor);
  const message = await messageOf(deps, thread.id, input.messageId);
  assertPinnable(message, thread.contextStartSeq);
  const seqs = await exchangeSeqsOf(deps.memory, message);
  const result = await deps.memory.pin({ threadId: thread.id, seqs, maxPinnedTokens: deps.pinnedMaxTokens });
  if (!result.pinned) {
    throw new AppError(
      'CONFLICT',
      `Pinning this needs ${result.addedTokens} more tokens, but ${result.pinnedTokens} of the ${deps.pinnedMaxTokens} tokens allowed for pinned messages are in use. Unpin something first.`,
      {
        details: {
          pinnedTokens: result.pinnedTokens,
          addedTokens: result.addedTokens,
          pinnedMaxTokens: deps.pinnedMaxTokens,
        },
      },
    );
  }
  publishUpdated(deps, thread.id, result.messages);
  return { messages: result.messages, pinnedTokens: result.pinnedTokens, pinnedMaxTokens: deps.pinnedMaxTokens };
}

/** Unpins a message (its whole tool exchange): it returns to the window and is folded like any other. Idempotent. */
export async function unpinMessage(
  input: { actor: MemoryActor; threadId: string; messageId: string },
  deps: MemoryDeps,
): Promise<PinOutcome> {
  const thread = await threadForActor(deps, input.threadId, input.actor);
  const message = await messageOf(deps, thread.id, input.messageId);
  const seqs = message.pinned ? await exchangeSeqsOf(deps.memory, message) : [];
  const result =
    seqs.length > 0
      ? await deps.memory.unpin({ threadId: thread.id, seqs })
      : { messages: [], pinnedTokens: await deps.memory.pinnedTokens(thread.id) };
  publishUpdated(deps, thread.id, result.messages);
  return { messages: result.messages, pinnedTokens: result.pinnedTokens, pinnedMaxTokens: deps.pinnedMaxTokens };
}
