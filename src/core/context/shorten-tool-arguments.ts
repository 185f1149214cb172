import type { TokenCounter } from './token-counter';
import type { ContextEntry, ContextState, ToolCall } from './types';

/** Tool-call arguments longer than this (as JSON) are shortened in packs (every call, the newest too). */
export const MAX_PACK_TOOL_ARGUMENT_CHARS = 2000;
const KEPT_CHARS = 300;

function shortenCall(call: ToolCall, seq: number, maxChars: number): ToolCall {
  const json = JSON.stringify(call.args);
  if (json.length <= maxChars) return call;
  return {
    ...call,
    args: {
      shortened: `${json.slice(0, KEPT_CHARS)}… [${json.length} characters of arguments; the full call is message #${seq} of the transcript]`,
    },
  };
}

function shortenEntry(
  entry: ContextEntry,
  counter: Pick<TokenCounter, 'countMessage'>,
  maxChars: number,
): ContextEntry {
  const calls = entry.toolCalls ?? [];
  if (entry.role !== 'assistant' || !calls.some((call) => JSON.stringify(call.args).length > maxChars)) return entry;
  const toolCalls = calls.map((call) => shortenCall(call, entry.seq, maxChars));
  return { ...entry, toolCalls, tokens: counter.countMessage({ role: entry.role, content: entry.content, toolCalls }) };
}

/**
 * Tool-call arguments longer than `maxChars` (default 2,000, as JSON) are shortened in the pack, as DeepAgents does
 * for file-writing tools: the transcript keeps them whole. Decided from each entry alone, never from which call is
 * the newest, so an entry is rendered the same way on every call and a provider's prompt cache keeps matching it
 * (the model reads its own call's result right after it). Shortened entries are recounted.
 */
export function shortenToolArguments(
  state: ContextState,
  counter: Pick<TokenCounter, 'countMessage'>,
  maxChars = MAX_PACK_TOOL_ARGUMENT_CHARS,
): ContextState {
  const shorten = (entry: ContextEntry) => shortenEntry(entry, counter, maxChars);
  return { ...state, window: state.window.map(shorten), pinned: state.pinned.map(shorten) };
}
