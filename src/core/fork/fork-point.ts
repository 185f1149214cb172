import type { TranscriptMessage } from '../domain/types';
import { AppError } from '../errors/app-error';
import { exchangeSeqsOf } from '../memory/exchange-seqs-of';
import type { MemoryControlsStore } from '../ports';

function isExchangePart(message: TranscriptMessage): boolean {
  return message.role === 'tool' || (message.role === 'assistant' && (message.toolCalls?.length ?? 0) > 0);
}

/**
 * The last seq a fork at `message` copies: the message's own, or, for a message of a tool exchange, the end of the
 * exchange (the assistant's calls and all their results), so a fork never holds half of one. Refused while the
 * message waits for its turn or is still being written, and when its exchange is not complete yet.
 */
export async function forkPointOf(
  message: TranscriptMessage,
  memory: Pick<MemoryControlsStore, 'listMessagesBySeq'>,
): Promise<number> {
  if (message.seq === null)
    throw new AppError('CONFLICT', 'This message is still waiting for its turn; branch from it once it is answered.');
  if (message.status === 'streaming' || message.status === 'pending') {
    throw new AppError('BUSY', 'This message is still being written; branch from it when it is done.');
  }
  if (!isExchangePart(message)) return message.seq;
  const seqs = await exchangeSeqsOf(memory, message);
  const last = Math.max(message.seq, ...seqs);
  const exchange = await memory.listMessagesBySeq({
    threadId: message.threadId,
    fromSeq: Math.min(...seqs),
    throughSeq: last,
  });
  const calls = exchange.flatMap((part) => (seqs.includes(part.seq ?? -1) ? (part.toolCalls ?? []) : []));
  const answered = new Set(
    exchange.flatMap((part) =>
      part.role === 'tool' && part.toolCallId && part.status !== 'streaming' ? [part.toolCallId] : [],
    ),
  );
  if (calls.some((call) => !answered.has(call.id))) {
    throw new AppError(
      'BUSY',
      'The tools this message called have not all answered yet; branch from it when they have.',
    );
  }
  return last;
}
