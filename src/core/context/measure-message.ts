import type { CountableMessage } from './token-counter';
import { TOKENS_PER_MESSAGE, TOKENS_PER_TOOL_CALL } from './token-counter';

/** Counts one message's tokens (a TokenCounter's `countMessage`, or the upper bound below). */
export type MessageMeasure = (message: CountableMessage) => number;

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/**
 * An upper bound of a message's tokens without a tokenizer: byte-level BPE never makes more tokens than UTF-8
 * bytes, and every role is one token. Used for text the engine renders itself when no counter is given, so the
 * budget guard stays safe.
 */
export function upperBoundMessageTokens(message: CountableMessage): number {
  let tokens = TOKENS_PER_MESSAGE + 1 + utf8Length(message.content);
  if (message.name !== undefined) tokens += 1 + utf8Length(message.name);
  for (const call of message.toolCalls ?? []) {
    tokens += TOKENS_PER_TOOL_CALL + utf8Length(call.name) + utf8Length(JSON.stringify(call.args));
  }
  return tokens;
}

/** Upper bound of a bare text's tokens (its UTF-8 bytes). */
export function upperBoundTextTokens(text: string): number {
  return utf8Length(text);
}
