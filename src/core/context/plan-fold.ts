import { groupExchangeBlocks } from './group-exchange-blocks';
import type { ModelProfile } from './model-profile';
import type { KeepPolicy } from './policies';
import type { ContextEntry } from './types';

export interface FoldPlan {
  /** Entries to fold into the summary, ascending seq. */
  folded: ContextEntry[];
  /** Entries that stay in the window, ascending seq. */
  kept: ContextEntry[];
}

export interface PlanFoldOptions {
  /** The window, ascending seq. */
  window: readonly ContextEntry[];
  keep: KeepPolicy;
  /** Needed for a `fraction` keep. */
  profile?: ModelProfile;
}

function keepLimit(keep: KeepPolicy, profile: ModelProfile | undefined): number {
  if (keep.kind !== 'fraction') return keep.value;
  if (!profile) throw new TypeError('planFold: a fraction keep policy needs the model profile');
  return Math.floor(keep.value * profile.maxInputTokens);
}

function sizeOf(block: readonly ContextEntry[], keep: KeepPolicy): number {
  return keep.kind === 'messages' ? block.length : block.reduce((sum, entry) => sum + entry.tokens, 0);
}

/** Index of the first kept block when even the newest block exceeds the keep: the newest user turn onward. */
function fallbackStart(blocks: readonly ContextEntry[][]): number {
  for (let index = blocks.length - 1; index >= 0; index -= 1) {
    if (blocks[index]?.some((entry) => entry.role === 'user')) return index;
  }
  return blocks.length - 1;
}

/**
 * Where to cut the window: keeps the newest entries that fit the keep policy, folds the rest. Cuts only between
 * exchange blocks (see groupExchangeBlocks): an assistant message with tool calls never loses its results and
 * the kept window never starts with a tool message. If even the newest block does not fit, the newest user turn
 * (the block holding the newest user message and everything after it) is kept anyway. A block holding a pinned
 * entry is never folded. When the whole window fits, nothing is folded.
 */
export function planFold(options: PlanFoldOptions): FoldPlan {
  const { window, keep } = options;
  const limit = keepLimit(keep, options.profile);
  const blocks = groupExchangeBlocks(window);
  let start = blocks.length;
  let used = 0;
  while (start > 0) {
    const size = sizeOf(blocks[start - 1] ?? [], keep);
    if (used + size > limit) break;
    used += size;
    start -= 1;
  }
  if (start === blocks.length && blocks.length > 0) start = fallbackStart(blocks);
  const folded: ContextEntry[] = [];
  const kept: ContextEntry[] = [];
  blocks.forEach((block, index) => {
    const stays = index >= start || block.some((entry) => entry.pinned === true);
    (stays ? kept : folded).push(...block);
  });
  return { folded, kept };
}
