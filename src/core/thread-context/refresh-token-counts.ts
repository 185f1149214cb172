import { findStaleCounts, type EncodingName, type TokenCounter } from '../context';
import type { ThreadContext } from '../domain/types';

export interface TokenRecount {
  /** The context with every count made with the configured encoding. */
  context: ThreadContext;
  /** What changed, to be stored (null when nothing was stale). */
  changes: {
    threadId: string;
    encoding: EncodingName;
    entries: { seq: number; tokens: number }[];
    summaryTokens: number | null;
  } | null;
}

/**
 * When the configured model's encoding changes, counts stored with the old one are redone (lazily, as a thread is
 * loaded), never mixed with new ones in a sum. Only the stale entries are counted again.
 */
export function refreshTokenCounts(
  context: ThreadContext,
  counter: Pick<TokenCounter, 'encoding' | 'countMessage' | 'countText'>,
): TokenRecount {
  const stale = new Set(findStaleCounts([...context.window, ...context.pinned], counter.encoding));
  const summary = context.thread.summary;
  const summaryStale =
    summary !== null && summary.text.length > 0 && context.thread.summaryEncoding !== counter.encoding;
  if (stale.size === 0 && !summaryStale) return { context, changes: null };
  const entries: { seq: number; tokens: number }[] = [];
  const recount = <T extends ThreadContext['window'][number]>(entry: T): T => {
    if (!stale.has(entry.seq)) return entry;
    const tokens = counter.countMessage({
      role: entry.role,
      content: entry.content,
      ...(entry.toolCalls ? { toolCalls: entry.toolCalls } : {}),
      ...(entry.toolCallId ? { toolCallId: entry.toolCallId } : {}),
    });
    entries.push({ seq: entry.seq, tokens });
    return { ...entry, tokens, tokenEncoding: counter.encoding };
  };
  const summaryTokens = summaryStale && summary ? counter.countText(summary.text) : null;
  return {
    context: {
      thread: {
        ...context.thread,
        ...(summary && summaryTokens !== null
          ? { summary: { ...summary, tokens: summaryTokens }, summaryEncoding: counter.encoding }
          : {}),
      },
      window: context.window.map(recount),
      pinned: context.pinned.map(recount),
    },
    changes: { threadId: context.thread.id, encoding: counter.encoding, entries, summaryTokens },
  };
}
