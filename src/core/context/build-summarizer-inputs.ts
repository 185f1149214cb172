import { DEFAULT_SUMMARY_MAX_TOKENS } from './policies';
import type { ContextEntry, SummaryState } from './types';

/** One summarizer call's worth of folded entries, summarized on top of the summary so far. */
export interface SummarizerChunk {
  /** First and last seq the chunk covers; after its summary commits, the summary covers through `throughSeq`. */
  fromSeq: number;
  throughSeq: number;
  /** The entries, ascending seq; an oversized entry appears with its content truncated (see truncatedSeqs). */
  entries: ContextEntry[];
  /** Sum of the entries' (possibly truncated) tokens. */
  tokens: number;
  /** Seqs whose content was cut to fit; they still count as covered. */
  truncatedSeqs: number[];
}

export interface BuildSummarizerInputsOptions {
  /** The summary before this fold (null for the first fold). */
  summary: SummaryState | null;
  /** The entries being folded, ascending seq. */
  folded: readonly ContextEntry[];
  /** `SUMMARY_INPUT_MAX_TOKENS`: what one summarizer call may be given in total. */
  budget: number;
  /** The cap of a summary, room reserved for the summary so far in every chunk after the first. Default 1200. */
  summaryMaxTokens?: number;
  /** Tokens of the prompt template around the entries. Default 0. */
  overheadTokens?: number;
  /** Makes truncation exact; without it the cut is estimated from the entry's characters per token. */
  counter?: { countText(text: string): number };
}

const TRUNCATION_SAFETY = 0.9;

function truncationMarker(omittedCharacters: number): string {
  return `\n[… ${omittedCharacters} characters cut to fit the summarizer input …]\n`;
}

function cutMiddle(content: string, keepCharacters: number): string {
  const head = Math.ceil((keepCharacters * 2) / 3);
  const tail = keepCharacters - head;
  return (
    content.slice(0, head) + truncationMarker(content.length - keepCharacters) + (tail > 0 ? content.slice(-tail) : '')
  );
}

/** Cuts the middle of an entry's content so it fits `room` tokens; keeps the head (2/3) and the tail (1/3). */
function truncateEntry(entry: ContextEntry, room: number, options: BuildSummarizerInputsOptions): ContextEntry {
  const overhead = Math.max(0, entry.tokens - (options.counter?.countText(entry.content) ?? entry.tokens));
  const contentRoom = Math.max(1, room - overhead - 20);
  const charactersPerToken = entry.content.length / Math.max(1, entry.tokens);
  let keepCharacters = Math.floor(contentRoom * charactersPerToken * TRUNCATION_SAFETY);
  let content = cutMiddle(entry.content, Math.min(keepCharacters, entry.content.length));
  while (options.counter && keepCharacters > 0 && overhead + options.counter.countText(content) > room) {
    keepCharacters = Math.floor(keepCharacters * 0.8);
    content = cutMiddle(entry.content, keepCharacters);
  }
  return { ...entry, content, tokens: Math.min(room, entry.tokens) };
}

/**
 * Splits the folded entries into chunks for a progressive summary: each chunk is summarized on top of the summary
 * so far (the previous summary for the first chunk, at most summaryMaxTokens for the next ones), and its entries
 * fit what is left of the budget. No entry is ever dropped: one larger than a whole chunk gets a chunk of its own
 * with the middle of its content cut (marked in the text, listed in `truncatedSeqs`), and its seq is covered.
 * Throws a RangeError when the budget leaves no room for entries.
 */
export function buildSummarizerInputs(options: BuildSummarizerInputsOptions): SummarizerChunk[] {
  const overhead = options.overheadTokens ?? 0;
  const firstRoom = options.budget - overhead - (options.summary?.tokens ?? 0);
  const laterRoom = options.budget - overhead - (options.summaryMaxTokens ?? DEFAULT_SUMMARY_MAX_TOKENS);
  if (Math.min(firstRoom, laterRoom) <= 0) {
    throw new RangeError(`buildSummarizerInputs: a budget of ${options.budget} tokens leaves no room for entries`);
  }
  const chunks: SummarizerChunk[] = [];
  let current: ContextEntry[] = [];
  let used = 0;
  let truncatedSeqs: number[] = [];
  const room = (): number => (chunks.length === 0 ? firstRoom : laterRoom);
  const close = (): void => {
    const first = current[0];
    const last = current[current.length - 1];
    if (!first || !last) return;
    chunks.push({ fromSeq: first.seq, throughSeq: last.seq, entries: current, tokens: used, truncatedSeqs });
    current = [];
    used = 0;
    truncatedSeqs = [];
  };
  for (const entry of options.folded) {
    if (used + entry.tokens > room()) close();
    if (entry.tokens > room()) {
      const truncated = truncateEntry(entry, room(), options);
      current = [truncated];
      used = truncated.tokens;
      truncatedSeqs = [entry.seq];
      close();
      continue;
    }
    current.push(entry);
    used += entry.tokens;
  }
  close();
  return chunks;
}
