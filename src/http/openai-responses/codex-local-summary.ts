/**
 * How Codex CLI's local compaction (the path it takes with a provider of its own) hands a summary on: after a turn that
 * asked the model for a summary, it rebuilds its history from its instructions, the user messages and one user message
 * made of its fixed handoff text, a newline, and that answer's text. Its first sentence is what we recognise.
 */
export const CODEX_SUMMARY_OPENING =
  'Another language model started to solve this problem and produced a summary of its thinking process.';

/** The summary a Codex handoff message carries (the answer it was taken from), or null when the text is not one. */
export function codexSummaryOf(text: string): string | null {
  if (!text.startsWith(CODEX_SUMMARY_OPENING)) return null;
  const newline = text.indexOf('\n');
  return newline < 0 ? null : text.slice(newline + 1);
}
