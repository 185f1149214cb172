import type { FoldPlan } from './plan-fold';
import type { ContextEntry, ContextState } from './types';

export interface ApplyFoldOptions {
  state: ContextState;
  plan: FoldPlan;
  /** The summary made from the previous summary plus `plan.folded`, already within its cap. */
  newSummary: { text: string; tokens: number };
}

function bySeq(a: ContextEntry, b: ContextEntry): number {
  return a.seq - b.seq;
}

/**
 * The state after committing a fold: the folded entries leave the window, the summary covers through the newest
 * folded seq with the next revision. Pinned entries the summary now reaches move to `pinned` (they are never
 * folded). Idempotent: re-applying a fold already committed (all folded seqs covered by the summary) returns the
 * state unchanged. Throws when the plan does not fit the state (folded entries neither in the window nor covered),
 * or in window-only mode, where nothing is folded.
 */
export function applyFold(options: ApplyFoldOptions): ContextState {
  const { state, plan, newSummary } = options;
  if (plan.folded.length === 0) return state;
  const coveredThrough = state.summary?.coveredThroughSeq ?? Number.NEGATIVE_INFINITY;
  if (plan.folded.every((entry) => entry.seq <= coveredThrough && !state.window.some((w) => w.seq === entry.seq))) {
    return state;
  }
  if (state.memoryMode === 'window-only') throw new Error('applyFold: a window-only thread is never folded');
  const windowSeqs = new Set(state.window.map((entry) => entry.seq));
  const stray = plan.folded.filter((entry) => !windowSeqs.has(entry.seq) || entry.pinned === true);
  if (stray.length > 0) {
    throw new Error(`applyFold: the plan folds seqs not in the unpinned window: ${stray.map((e) => e.seq).join(', ')}`);
  }
  const foldedSeqs = new Set(plan.folded.map((entry) => entry.seq));
  const newCoveredThrough = Math.max(coveredThrough, ...plan.folded.map((entry) => entry.seq));
  const remaining = state.window.filter((entry) => !foldedSeqs.has(entry.seq));
  const nowPinned = remaining.filter((entry) => entry.pinned === true && entry.seq <= newCoveredThrough);
  return {
    ...state,
    summary: {
      text: newSummary.text,
      tokens: newSummary.tokens,
      coveredThroughSeq: newCoveredThrough,
      revision: (state.summary?.revision ?? 0) + 1,
    },
    window: remaining.filter((entry) => !nowPinned.includes(entry)),
    pinned: [...state.pinned, ...nowPinned].sort(bySeq),
  };
}
