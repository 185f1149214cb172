// Builders for tests only (not exported from index.ts).
import type { ContextEntry, ContextState, Role, ToolCall } from './types';

export function entry(seq: number, role: Role, tokens = 10, extra: Partial<ContextEntry> = {}): ContextEntry {
  return { seq, role, content: `${role} message ${seq}`, tokens, ...extra };
}

export const user = (seq: number, tokens = 10): ContextEntry => entry(seq, 'user', tokens);
export const reply = (seq: number, tokens = 10): ContextEntry => entry(seq, 'assistant', tokens);
export const note = (seq: number, tokens = 10): ContextEntry => entry(seq, 'system', tokens);

export function call(id: string): ToolCall {
  return { id, name: 'lookup', args: { query: id } };
}

/** An assistant message calling the given ids. */
export function calls(seq: number, ids: string[], tokens = 10): ContextEntry {
  return entry(seq, 'assistant', tokens, { content: '', toolCalls: ids.map(call) });
}

/** A tool message answering `id`. */
export function result(seq: number, id: string, tokens = 10): ContextEntry {
  return entry(seq, 'tool', tokens, { content: `result of ${id}`, toolCallId: id });
}

/** An assistant message calling `count` tools (ids `${prefix}0…`) followed by the answers in reverse order. */
export function parallelExchange(startSeq: number, count: number, prefix = 'c', tokens = 10): ContextEntry[] {
  const ids = Array.from({ length: count }, (_, index) => `${prefix}${index}`);
  const answers = [...ids].reverse().map((id, index) => result(startSeq + 1 + index, id, tokens));
  return [calls(startSeq, ids, tokens), ...answers];
}

export function state(window: ContextEntry[], overrides: Partial<ContextState> = {}): ContextState {
  return { summary: null, window, pinned: [], contextStartSeq: 0, memoryMode: 'summary', ...overrides };
}

export const seqs = (entries: readonly { seq?: number }[]): (number | undefined)[] => entries.map((item) => item.seq);
