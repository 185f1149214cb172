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
 * Whether part of the window should be folded into the summary: any trigger condition fires (>=) on
 * window + summary + held recall tokens, window entries, or that share of the model's max input. Window-only mode never folds;
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
  // Held recall notes (sticky recall) are in every pack until the next fold: they count like the window.
  const tokens = Math.ceil(
    window.reduce((sum, entry) => sum + entry.tokens, (state.summary?.tokens ?? 0) + (state.heldRecallTokens ?? 0)) *
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
