import type { Thread, TranscriptMessage } from '../domain/types';
import type { MessageCopy } from '../ports';
import { toMessageDto, toThreadDto } from '../dto/api-dto';
import { AppError } from '../errors/app-error';
import { exchangeSeqsOf } from './exchange-seqs-of';
import type { MemoryActor, MemoryDeps } from './memory-deps';
import { requestRebuild } from './request-rebuild';
import { isSummaryWithdrawn } from '../domain/types';
import { threadForActor } from './thread-for-actor';
import { spendOrRefuse } from '../turn/spend-or-refuse';

export interface ForgetOutcome {
  /** The tombstones. */
  messages: TranscriptMessage[];
  /** The summary covered a forgotten message: it left the pack and is being rebuilt from the remaining transcript. */
  memoryRebuilding: boolean;
  thread: Thread;
  /** Copies of the forgotten messages the owner's other threads still hold: a forget reaches one thread only. */
  copies: MessageCopy[];
}

/** The message and, unless `only`, the answers that may quote it: a user message's answers, an answer's whole turn. */
async function targetsOf(message: TranscriptMessage, only: boolean, deps: MemoryDeps): Promise<TranscriptMessage[]> {
  if (only) return [message];
  if (message.role === 'user') return [message, ...(await deps.memory.listAnswers(message.threadId, message.id))];
  return message.turnId ? await deps.transcript.listTurnMessages(message.turnId) : [message];
}

/** Adds the rest of every tool exchange a target belongs to: a pack never holds half of one. */
async function withWholeExchanges(targets: TranscriptMessage[], deps: MemoryDeps): Promise<TranscriptMessage[]> {
  const seqs = new Set<number>();
  for (const target of targets) for (const seq of await exchangeSeqsOf(deps.memory, target)) seqs.add(seq);
  const known = new Set(targets.map((target) => target.seq));
  const missing = [...seqs].filter((seq) => !known.has(seq));
  const extra = missing.length > 0 ? await deps.memory.findMessagesBySeq(targets[0]?.threadId ?? '', missing) : [];
  return [...targets, ...extra];
}

/**
 * Forgets a message (by default with the answers of its turn; `only` for the one message): the transcript keeps a
 * tombstone (seq, role, time), its content is erased from the transcript, the window and the tool runs, and every
 * summary revision that covered it is redacted. When the current summary covered it, it leaves the pack at once
 * (the pack says that memory is being rebuilt) and is rebuilt from the remaining transcript in the background.
 */
export async function forgetMessage(
  input: { actor: MemoryActor; threadId: string; messageId: string; only?: boolean },
  deps: MemoryDeps,
): Promise<ForgetOutcome> {
  const thread = await threadForActor(deps, input.threadId, input.actor);
  const message = await deps.transcript.findMessage(thread.id, input.messageId);
  if (!message) throw new AppError('NOT_FOUND', 'No such message in this thread.');
  if (message.deleted)
    return {
      messages: [message],
      memoryRebuilding: isSummaryWithdrawn(thread),
      thread,
      copies: await copiesOf([message], thread, deps),
    };
  if (message.seq === null) throw new AppError('CONFLICT', 'This message is still waiting for its turn.');
  const targets = (await withWholeExchanges(await targetsOf(message, input.only ?? false, deps), deps)).filter(
    (target) => !target.deleted,
  );
  if (targets.some((target) => target.status === 'streaming' || target.status === 'pending')) {
    throw new AppError('CONFLICT', 'The answer is still being written: stop it or wait for it, then delete.');
  }
  // Erasing what the summary covered rebuilds it with the model: a user's such forget spends like a send.
  const covered = thread.summary?.coveredThroughSeq ?? 0;
  if (!input.actor.admin && targets.some((target) => target.seq !== null && target.seq <= covered))
    await spendOrRefuse(deps.sendLimiter, input.actor.userId);
  const result = await deps.memory.forget({ threadId: thread.id, messageIds: targets.map((target) => target.id) });
  for (const tombstone of result.messages)
    deps.events.publish({ type: 'message-updated', threadId: thread.id, message: toMessageDto(tombstone) });
  const memoryRebuilding = isSummaryWithdrawn(result.thread);
  if (memoryRebuilding) {
    deps.events.publish({ type: 'thread-updated', threadId: thread.id, thread: toThreadDto(result.thread) });
    await requestRebuild(deps, result.thread);
  }
  deps.log.info(
    {
      threadId: thread.id,
      messages: result.messages.length,
      redactedRevisions: result.redactedRevisions,
      memoryRebuilding,
    },
    'messages forgotten',
  );
  return {
    messages: result.messages,
    memoryRebuilding,
    thread: result.thread,
    copies: await copiesOf(result.messages, result.thread, deps),
  };
}

/** Copies the owner's other threads hold of these messages (forks and the threads they were forked from). */
async function copiesOf(messages: TranscriptMessage[], thread: Thread, deps: MemoryDeps): Promise<MessageCopy[]> {
  if (!deps.forks || messages.length === 0) return [];
  return deps.forks.listCopies({ messageIds: messages.map((message) => message.id), ownerId: thread.ownerId });
}
