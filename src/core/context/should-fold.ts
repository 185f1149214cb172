import type { ModelProfile } from './model-profile';
import { formatCondition, type TriggerPolicy } from './policies';
import type { ContextEntry, ContextState } from './types';

export interface FoldDecision {
  fold: boolean;
  /** One line per condition that fired, e.g. `tokens=6000: 6120 >= 6000`. */
  reasons: string[];
}

/** The window entries the engine may see: those at or after the context start. */
export function visibleWindow(state: ContextState): ContextEntry[] {
  return state.window.filter((entry) => entry.seq >= state.contextStartSeq);
}

/**
 * How much a held recall note's token counts toward the fold trigger, against one of the window or the summary.
 * A held note is read again on every call until the next fold and the fold drops it whole (nothing of it goes into
 * the summary), while a window message a fold takes is replaced by its share of the summary: a fold pays for itself
 * sooner the more of the pack is held notes. Measured on Claude's rules (`BENCH_CACHE_PROVIDER=anthropic
 * BENCH_CACHE_SHAPE=issue npm run bench:cache`, bench/README.md "Held notes weigh double"): effective input per call
 * 583 → 567–568 tokens (1.09× → 1.06× LangChain's), 591 → 580 on the second stretch, evidence unchanged (0.88–0.92);
 * weights 1.5, 3 and 4 gave 578, 570 and 585.
 */
export const HELD_RECALL_TRIGGER_WEIGHT = 2;

/**
 * Whether part of the window should be folded into the summary: any trigger condition fires (>=) on
 * window + summary + held recall tokens (each weighing HELD_RECALL_TRIGGER_WEIGHT), window entries, or that share of
 * the model's max input. Window-only mode never folds;
 * an empty window never folds. `estimateFactor` (the model's EstimateCorrection, >= 1) scales the token count.
 */
export function shouldFold(
  state: ContextState,
  policy: TriggerPolicy,
  profile: ModelProfile,
  estimateFactor = 1,
): FoldDecision {
  const window = visibleWindow(state);
  if (state.memoryMode === 'window-only' || window.length === 0) return { fold: false, reasons: [] };
  // Stored counts are our estimate; the model's correction (>= 1) makes them what the provider will count.
  // Held recall notes (sticky recall) are in every pack until the next fold, and weigh more (above).
  const held = (state.heldRecallTokens ?? 0) * HELD_RECALL_TRIGGER_WEIGHT;
  const tokens = Math.ceil(
    window.reduce((sum, entry) => sum + entry.tokens, (state.summary?.tokens ?? 0) + held) *
      Math.max(1, estimateFactor),
  );
  const reasons: string[] = [];
  for (const condition of policy.conditions) {
    const measured = condition.kind === 'messages' ? window.length : tokens;
    const threshold = condition.kind === 'fraction' ? condition.value * profile.maxInputTokens : condition.value;
    if (measured >= threshold) reasons.push(`${formatCondition(condition)}: ${measured} >= ${threshold}`);
  }
  return { fold: reasons.length > 0, reasons };
}
