import type { MessageMeasure } from './measure-message';
import type { ContextEntry } from './types';

/**
 * The fewest tokens a condensed user message may take (the marker and some of the message's head and tail): a pack
 * with less room for the newest user message cannot carry it even condensed.
 */
export const MIN_CONDENSED_MESSAGE_TOKENS = 120;

/** Opens the marker that stands where a condensed message's middle was cut. */
export const CONDENSED_MESSAGE_OPEN = '[… ';

/** The marker that stands where the middle of message #seq was cut: what was left out and where it stays. */
export function condensedMessageMarker(input: { seq: number; cutCharacters: number; totalCharacters: number }): string {
  return (
    `\n\n${CONDENSED_MESSAGE_OPEN}${input.cutCharacters} of this message's ${input.totalCharacters} characters are left out here: ` +
    `it is too long for the model's context. The full message stays in the conversation's transcript as #${input.seq}` +
    ' (searching the conversation finds its parts) …]\n\n'
  );
}

function cutMiddle(entry: ContextEntry, keepCharacters: number): string {
  const head = Math.ceil((keepCharacters * 2) / 3);
  const tail = keepCharacters - head;
  const marker = condensedMessageMarker({
    seq: entry.seq,
    cutCharacters: entry.content.length - keepCharacters,
    totalCharacters: entry.content.length,
  });
  return `${entry.content.slice(0, head).trimEnd()}${marker}${tail > 0 ? entry.content.slice(-tail).trimStart() : ''}`;
}

/**
 * A user entry too long for the pack, condensed to at most `tokens` (as `measure` counts the message): its head (two
 * thirds) and tail (one third) around a marker naming what was cut and where the full text stays. The transcript is
 * untouched; only what this call's model reads is shorter. Null when `tokens` is below MIN_CONDENSED_MESSAGE_TOKENS or
 * not even the marker with a little text fits.
 */
export function condenseOversizedMessage(input: {
  entry: ContextEntry;
  tokens: number;
  measure: MessageMeasure;
}): ContextEntry | null {
  const { entry, tokens, measure } = input;
  if (tokens < MIN_CONDENSED_MESSAGE_TOKENS) return null;
  const size = (content: string) => measure({ role: 'user', content });
  // The stored count (a whole message is not counted again on every call).
  const whole = entry.tokens > 0 ? entry.tokens : size(entry.content);
  if (whole <= tokens) return { ...entry, tokens: whole };
  // Start from the characters a token holds in this message, then shrink until it fits (a few rounds at most).
  const charactersPerToken = entry.content.length / Math.max(1, whole);
  let keep = Math.floor((tokens - size(cutMiddle(entry, 0))) * charactersPerToken * 0.95);
  while (keep > 0) {
    const content = cutMiddle(entry, Math.min(keep, entry.content.length));
    const measured = size(content);
    if (measured <= tokens) return { ...entry, content, tokens: measured };
    keep = Math.floor(keep * Math.min(0.9, tokens / measured));
  }
  return null;
}
