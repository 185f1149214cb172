import { expandPinToExchange, type ContextEntry } from '../context';
import type { TranscriptMessage } from '../domain/types';
import type { MemoryControlsStore } from '../ports';

/** How far around a message a tool exchange is looked for (8 tool rounds of parallel calls fit easily). */
const EXCHANGE_RADIUS = 200;

function isExchangePart(message: TranscriptMessage): boolean {
  return message.role === 'tool' || (message.role === 'assistant' && (message.toolCalls?.length ?? 0) > 0);
}

function asEntry(message: TranscriptMessage): ContextEntry {
  const entry: ContextEntry = {
    seq: message.seq ?? 0,
    role: message.role,
    content: message.content,
    tokens: message.tokens,
  };
  if (message.toolCalls) entry.toolCalls = message.toolCalls;
  if (message.toolCallId) entry.toolCallId = message.toolCallId;
  return entry;
}

/**
 * The seqs a control on `message` applies to: the message itself, or, for a message of a tool exchange, the whole
 * exchange (the assistant's calls and all their results), so no pack ever holds half of one.
 */
export async function exchangeSeqsOf(
  memory: Pick<MemoryControlsStore, 'listMessagesBySeq'>,
  message: TranscriptMessage,
): Promise<number[]> {
  const seq = message.seq;
  if (seq === null) return [];
  if (!isExchangePart(message)) return [seq];
  const around = await memory.listMessagesBySeq({
    threadId: message.threadId,
    fromSeq: Math.max(1, seq - EXCHANGE_RADIUS),
    throughSeq: seq + EXCHANGE_RADIUS,
  });
  const entries = around
    .filter((candidate) => candidate.seq !== null && !candidate.deleted && !candidate.superseded)
    .map(asEntry);
  const seqs = expandPinToExchange(entries, seq);
  return seqs.length > 0 ? seqs : [seq];
}
