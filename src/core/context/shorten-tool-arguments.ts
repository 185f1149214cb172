import type { TokenCounter } from './token-counter';
import type { ContextEntry, ContextState, ToolCall } from './types';

/** Tool-call arguments longer than this (as JSON) are shortened in packs, except in the newest call. */
export const MAX_PACK_TOOL_ARGUMENT_CHARS = 2000;
const KEPT_CHARS = 300;

function shortenCall(call: ToolCall, seq: number, maxChars: number): ToolCall {
  const json = JSON.stringify(call.args);
  if (json.length <= maxChars) return call;
  return {
    ...call,
    args: { shortened: `${json.slice(0, KEPT_CHARS)}… [${json.length} characters of arguments; the full call is message #${seq} of the transcript]` },
  };
}

function shortenEntry(entry: ContextEntry, counter: Pick<TokenCounter, 'countMessage'>, maxChars: number): ContextEntry {
  const calls = entry.toolCalls ?? [];
  if (entry.role !== 'assistant' || !calls.some((call) => JSON.stringify(call.args).length > maxChars)) return entry;
  const toolCalls = calls.map((call) => shortenCall(call, entry.seq, maxChars));
  return { ...entry, toolCalls, tokens: counter.countMessage({ role: entry.role, content: entry.content, toolCalls }) };
}

/**
 * Old tool-call arguments longer than `maxChars` (default 2,000) are shortened in the pack, as DeepAgents does for
 * file-writing tools: the transcript keeps them whole. The newest assistant entry with tool calls is left as is
 * (the model is in the middle of that exchange). Shortened entries are recounted.
 */
export function shortenOldToolArguments(state: ContextState, counter: Pick<TokenCounter, 'countMessage'>, maxChars = MAX_PACK_TOOL_ARGUMENT_CHARS): ContextState {
  const newest = [...state.pinned, ...state.window]
    .filter((entry) => entry.role === 'assistant' && (entry.toolCalls?.length ?? 0) > 0)
    .reduce((max, entry) => Math.max(max, entry.seq), -1);
  const shorten = (entry: ContextEntry) => (entry.seq === newest ? entry : shortenEntry(entry, counter, maxChars));
  return { ...state, window: state.window.map(shorten), pinned: state.pinned.map(shorten) };
}
