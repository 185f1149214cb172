import { defaultReservedOutputTokens, type ContextWindow } from './model-profile';
import {
  DEFAULT_SUMMARIZER_INPUT_MAX_TOKENS,
  DEFAULT_SUMMARY_MAX_TOKENS,
  DEFAULT_TRIGGER_TOKENS,
  type KeepPolicy,
  type TriggerPolicy,
} from './policies';

/** Default `SUMMARY_KEEP` where the window allows it. */
const DEFAULT_KEEP_MESSAGES = 12;
/** Default `TOOL_RESULT_INLINE_TOKENS` where the window allows it. */
export const DEFAULT_TOOL_RESULT_INLINE_TOKENS = 800;
/** The fraction of `SUMMARY_TRIGGER` that the default trigger always carries beside its token threshold. */
const DEFAULT_TRIGGER_FRACTION = 0.75;

/**
 * The context configuration that follows from a window when nothing is set: today's absolute defaults wherever
 * the window allows them, scaled down only where a small window forces it. Every value is a pure function of the
 * window, so the README's table and a deployment's start log agree.
 *
 * - output reserve: min(max output, 4096, a quarter of the window);
 * - trigger: `tokens=T,fraction=0.75` with T = min(6000, half the pack budget), so a fold starts while the pack
 *   still has room for the system prefix, pins, tools and the next input;
 * - summary cap: min(1200, T / 5); keep: `messages=12` while T is 6000, else `tokens=2T/5` (after a fold the
 *   context holds at most 60% of the trigger, under the 80% headroom the validator asks for);
 * - summarizer input: min(6000, 80% of the budget); pinned cap: a quarter of the budget;
 * - inline tool results: min(800, a sixth of the budget).
 */
export interface DerivedContextDefaults {
  reservedOutputTokens: number;
  trigger: TriggerPolicy;
  keep: KeepPolicy;
  summaryMaxTokens: number;
  summarizerInputMaxTokens: number;
  pinnedMaxTokens: number;
  toolResultInlineTokens: number;
}

/**
 * The defaults of a window. `reservedOutputTokens` may be the deployment's own: the pack budget, and so everything
 * derived from it, follows the reserve actually in force.
 */
export function deriveContextDefaults(
  window: ContextWindow,
  reservedOutputTokens = defaultReservedOutputTokens(window),
): DerivedContextDefaults {
  const budget = Math.max(0, window.maxInputTokens - reservedOutputTokens);
  const triggerTokens = Math.max(1, Math.min(DEFAULT_TRIGGER_TOKENS, Math.floor(budget / 2)));
  const roomy = triggerTokens >= DEFAULT_TRIGGER_TOKENS;
  return {
    reservedOutputTokens,
    trigger: {
      conditions: [
        { kind: 'tokens', value: triggerTokens },
        { kind: 'fraction', value: DEFAULT_TRIGGER_FRACTION },
      ],
    },
    keep: roomy
      ? { kind: 'messages', value: DEFAULT_KEEP_MESSAGES }
      : { kind: 'tokens', value: Math.max(1, Math.floor((2 * triggerTokens) / 5)) },
    summaryMaxTokens: Math.min(DEFAULT_SUMMARY_MAX_TOKENS, Math.floor(triggerTokens / 5)),
    summarizerInputMaxTokens: Math.min(DEFAULT_SUMMARIZER_INPUT_MAX_TOKENS, Math.floor(budget * 0.8)),
    pinnedMaxTokens: Math.floor(budget / 4),
    toolResultInlineTokens: Math.min(DEFAULT_TOOL_RESULT_INLINE_TOKENS, Math.floor(budget / 6)),
  };
}
