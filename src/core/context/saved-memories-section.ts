import type { SavedMemoryItem } from './types';

/** The heading of the saved memories section of the leading system message. */
export const SAVED_MEMORIES_HEADING = '## Saved memories (facts the user asked you to remember, in every conversation)';

/** Default USER_MEMORY_TOKENS for a budget: a tenth of it, at most 1,000 tokens. */
export function defaultUserMemoryTokens(budget: number): number {
  return Math.min(1000, Math.floor(budget / 10));
}

/** One item's line in the section (what `SavedMemoryItem.tokens` counts, with its newline). */
export function savedMemoryLine(text: string): string {
  return `- ${text}`;
}

/**
 * The items that go into the pack under a cap of `capTokens`: the newest first while their tokens fit (over the cap
 * the newest win; the first one that does not fit ends the list, so an older short item never jumps a newer one).
 * `items` newest first; returns their ids.
 */
export function savedMemoriesInContext(
  items: readonly Pick<SavedMemoryItem, 'id' | 'tokens'>[],
  capTokens: number,
): Set<string> {
  const chosen = new Set<string>();
  let used = 0;
  for (const item of items) {
    if (used + item.tokens > capTokens) break;
    used += item.tokens;
    chosen.add(item.id);
  }
  return chosen;
}

/**
 * The section the leading system message carries between the system prefix and the summary: the chosen items
 * oldest first (a new item appends, so what came before stays a stable prefix for provider caches). '' when none.
 */
export function savedMemoriesSection(items: readonly SavedMemoryItem[]): string {
  if (items.length === 0) return '';
  const ordered = [...items].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  return `\n\n${SAVED_MEMORIES_HEADING}\n${ordered.map((item) => savedMemoryLine(item.text)).join('\n')}`;
}
