import { groupExchangeBlocks } from './group-exchange-blocks';
import type { ContextEntry } from './types';

function isExchangePart(entry: ContextEntry): boolean {
  return entry.role === 'tool' || (entry.role === 'assistant' && (entry.toolCalls?.length ?? 0) > 0);
}

/**
 * The seqs to pin when the user pins `seq` (`entries` ascending seq): the entry itself, or, when it is part of a
 * tool exchange, the whole exchange: the assistant calls and all their results (overlapping exchanges together).
 * Plain messages interleaved in an exchange are not part of it. Empty when `seq` is not among the entries.
 */
export function expandPinToExchange(entries: readonly ContextEntry[], seq: number): number[] {
  const block = groupExchangeBlocks(entries).find((candidate) => candidate.some((entry) => entry.seq === seq));
  const target = block?.find((entry) => entry.seq === seq);
  if (!block || !target) return [];
  if (!isExchangePart(target)) return [seq];
  return block.filter(isExchangePart).map((entry) => entry.seq);
}
