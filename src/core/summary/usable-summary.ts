/** A summarizer answer that must never be committed: empty, or an error / refusal instead of a summary. */
export class UnusableSummaryError extends Error {
  override name = 'UnusableSummaryError';
}

const NOT_A_SUMMARY = [
  /^(error|exception|traceback)\b/i,
  /^(i'?m sorry|i am sorry|sorry,|i can(?:'|no)t|i cannot|as an ai)\b/i,
  /^(undefined|null|none|n\/a|\[object object\])$/i,
  /^<!doctype html|^<html/i,
];

/** Throws UnusableSummaryError when `text` is empty or is just an error text. */
export function assertUsableSummary(text: string): void {
  const trimmed = text.trim();
  if (trimmed.length === 0) throw new UnusableSummaryError('the summarizer returned an empty summary');
  if (!/\p{L}/u.test(trimmed)) throw new UnusableSummaryError('the summarizer returned no words');
  if (NOT_A_SUMMARY.some((pattern) => pattern.test(trimmed))) {
    throw new UnusableSummaryError(`the summarizer returned an error instead of a summary: ${trimmed.slice(0, 80)}`);
  }
}
