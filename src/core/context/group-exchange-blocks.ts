import type { ContextEntry } from './types';

/**
 * Splits entries (ascending seq) into the smallest runs the window may be cut between.
 * A cut is allowed before entry k only when k is not a tool message and no tool exchange spans it, an exchange
 * running from an assistant message with tool calls to the last tool message answering one of its calls (answers
 * in any order; exchanges that overlap, like a block of tool messages answering two assistant messages, merge).
 * A tool message whose call is not in `entries` stays with the run before it, so no run but the first starts
 * with a tool message.
 */
export function groupExchangeBlocks<T extends Pick<ContextEntry, 'role' | 'toolCalls' | 'toolCallId'>>(
  entries: readonly T[],
): T[][] {
  const lastAnswerIndex = new Map<string, number>();
  entries.forEach((entry, index) => {
    if (entry.role === 'tool' && entry.toolCallId !== undefined) lastAnswerIndex.set(entry.toolCallId, index);
  });
  const blocks: T[][] = [];
  let current: T[] = [];
  let spanEnd = -1;
  entries.forEach((entry, index) => {
    const canCut = current.length > 0 && entry.role !== 'tool' && index > spanEnd;
    if (canCut) {
      blocks.push(current);
      current = [];
    }
    current.push(entry);
    for (const call of entry.role === 'assistant' ? (entry.toolCalls ?? []) : []) {
      const answer = lastAnswerIndex.get(call.id);
      if (answer !== undefined && answer > spanEnd) spanEnd = answer;
    }
  });
  if (current.length > 0) blocks.push(current);
  return blocks;
}
