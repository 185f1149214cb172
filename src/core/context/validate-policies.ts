import { budgetOf, type ModelProfile } from './model-profile';
import {
  DEFAULT_SUMMARIZER_INPUT_MAX_TOKENS,
  DEFAULT_SUMMARY_MAX_TOKENS,
  formatCondition,
  type KeepPolicy,
  type TriggerPolicy,
} from './policies';
import type { Result } from './types';

/** After a fold the context must sit at or below this share of every trigger threshold ("well below"). */
export const FOLD_HEADROOM = 0.8;
/** The smallest summary cap the deployment accepts (`SUMMARY_MAX_TOKENS`' minimum). */
const MIN_SUMMARY_TOKENS = 64;

export interface PolicySettings {
  trigger: TriggerPolicy;
  keep: KeepPolicy;
  profile: ModelProfile;
  /** `SUMMARY_MAX_TOKENS`, default 1200. */
  summaryMaxTokens?: number;
  /** `SUMMARY_INPUT_MAX_TOKENS`, default 6000. */
  summarizerInputMaxTokens?: number;
  /**
   * Largest entry the deployment accepts, if it has such a limit. Needed to bound a `messages=N` keep in tokens;
   * without it a `messages` keep is only checked against a `messages` trigger.
   */
  maxMessageTokens?: number;
  /**
   * The prompt budget of the summarizer's model, when it is known to be the chat model's window (no separate
   * SUMMARY_MODEL): its input cap must fit it.
   */
  summarizerBudget?: number;
}

export interface ValidatedPolicies {
  trigger: TriggerPolicy;
  keep: KeepPolicy;
  summaryMaxTokens: number;
  summarizerInputMaxTokens: number;
}

/** Worst-case tokens the kept window can hold after a fold, or undefined when the keep does not bound it. */
function keptTokensBound(settings: PolicySettings): number | undefined {
  const { keep, profile, maxMessageTokens } = settings;
  if (keep.kind === 'tokens') return keep.value;
  if (keep.kind === 'fraction') return Math.floor(keep.value * profile.maxInputTokens);
  return maxMessageTokens === undefined ? undefined : keep.value * maxMessageTokens;
}

function describeKeep(settings: PolicySettings): string {
  const { keep, maxMessageTokens } = settings;
  const name = `SUMMARY_KEEP=${formatCondition(keep)}`;
  if (keep.kind === 'messages')
    return maxMessageTokens === undefined
      ? name
      : `${name} (${keep.value} x ${maxMessageTokens} tokens at the max message size)`;
  return keep.kind === 'fraction' ? `${name} (${keptTokensBound(settings)} tokens)` : name;
}

/** The lowest token threshold of the trigger's `tokens` and `fraction` conditions (undefined: messages only). */
function lowestTokenThreshold(settings: PolicySettings): number | undefined {
  const thresholds = settings.trigger.conditions
    .filter((condition) => condition.kind !== 'messages')
    .map((condition) =>
      condition.kind === 'tokens' ? condition.value : condition.value * settings.profile.maxInputTokens,
    );
  return thresholds.length === 0 ? undefined : Math.min(...thresholds);
}

function formatTriggerConditions(settings: PolicySettings): string {
  return settings.trigger.conditions.map(formatCondition).join(',');
}

/** The three levers of a fold that leaves too much, each with a value that would work. */
function foldLevers(threshold: number, summaryMaxTokens: number, keptTokens: number | undefined): string {
  const room = Math.floor(FOLD_HEADROOM * threshold);
  const levers: string[] = [];
  if (keptTokens !== undefined && room - summaryMaxTokens >= 1)
    levers.push(`lower SUMMARY_KEEP (e.g. tokens=${room - summaryMaxTokens})`);
  else if (keptTokens !== undefined) levers.push('lower SUMMARY_KEEP');
  const summaryRoom = room - (keptTokens ?? 0);
  levers.push(
    summaryRoom >= MIN_SUMMARY_TOKENS ? `lower SUMMARY_MAX_TOKENS (e.g. ${summaryRoom})` : 'lower SUMMARY_MAX_TOKENS',
  );
  levers.push(
    `raise SUMMARY_TRIGGER (e.g. tokens=${Math.ceil((summaryMaxTokens + (keptTokens ?? 0)) / FOLD_HEADROOM)})`,
  );
  return `${levers.join(', ').replace(/^l/, 'L')}`;
}

/**
 * Checks that every fold shrinks the context well below the trigger, so the product does not fold on every turn.
 * The rule: after a fold the context holds at most the summary cap plus the worst-case kept window, and that must be
 * at most FOLD_HEADROOM (80%) of each trigger threshold:
 * - `tokens=T` / `fraction=F` triggers: summaryMaxTokens + kept tokens <= 0.8 x T (or 0.8 x F x maxInputTokens),
 *   kept tokens being N for `tokens=N`, F' x maxInputTokens for `fraction=F'`, N x maxMessageTokens for `messages=N`
 *   (skipped when maxMessageTokens is unknown: only the summary cap is checked then);
 * - `messages=M` trigger: the keep must be `messages=N` with N <= 0.8 x M (a token keep can keep any number of
 *   small messages).
 * Also: summary cap + kept tokens must fit the pack budget, and the summarizer input must be at least twice the
 * summary cap (each chunk is summarized on top of the summary so far).
 */
export function validatePolicies(settings: PolicySettings): Result<ValidatedPolicies> {
  const summaryMaxTokens = settings.summaryMaxTokens ?? DEFAULT_SUMMARY_MAX_TOKENS;
  const summarizerInputMaxTokens = settings.summarizerInputMaxTokens ?? DEFAULT_SUMMARIZER_INPUT_MAX_TOKENS;
  const keptTokens = keptTokensBound(settings);
  const afterFold = summaryMaxTokens + (keptTokens ?? 0);
  const problems: string[] = [];

  for (const condition of settings.trigger.conditions) {
    const name = `SUMMARY_TRIGGER ${formatCondition(condition)}`;
    if (condition.kind === 'messages') {
      const limit = Math.floor(FOLD_HEADROOM * condition.value);
      if (settings.keep.kind !== 'messages') {
        problems.push(
          `${name} needs SUMMARY_KEEP=messages=N with N <= ${limit}: ${describeKeep(settings)} can keep ` +
            `more than ${condition.value} small messages, which would fold on every turn`,
        );
      } else if (settings.keep.value > limit) {
        problems.push(
          `${describeKeep(settings)} keeps too many messages for ${name}: a fold must leave at most ` +
            `${limit} (80% of the trigger), or the next turn folds again`,
        );
      }
      continue;
    }
    const threshold = condition.kind === 'tokens' ? condition.value : condition.value * settings.profile.maxInputTokens;
    if (afterFold > FOLD_HEADROOM * threshold) {
      const kept = keptTokens === undefined ? '' : ` + ${describeKeep(settings)}`;
      problems.push(
        `${name} fires at ${Math.floor(threshold)} tokens, but after a fold the context can still hold ` +
          `SUMMARY_MAX_TOKENS=${summaryMaxTokens}${kept} = ${afterFold} tokens, above 80% of the trigger ` +
          `(${Math.floor(FOLD_HEADROOM * threshold)}), so every turn would fold. ${foldLevers(threshold, summaryMaxTokens, keptTokens)}`,
      );
    }
  }
  const budget = budgetOf(settings.profile);
  const lowest = lowestTokenThreshold(settings);
  if (lowest !== undefined && lowest > budget) {
    problems.push(
      `SUMMARY_TRIGGER ${formatTriggerConditions(settings)} first fires at ${Math.floor(lowest)} tokens, above the pack budget ` +
        `of ${budget} tokens (CONTEXT_MAX_INPUT_TOKENS=${settings.profile.maxInputTokens} - RESERVED_OUTPUT_TOKENS=` +
        `${settings.profile.reservedOutputTokens}): the window would outgrow the pack before a fold. Try SUMMARY_TRIGGER=tokens=${Math.floor(budget / 2)}`,
    );
  }
  if (afterFold > budget) {
    problems.push(
      `SUMMARY_MAX_TOKENS + kept window (${afterFold} tokens) exceeds the pack budget of ${budget} tokens ` +
        `for ${settings.profile.name}: lower SUMMARY_MAX_TOKENS or SUMMARY_KEEP, or raise CONTEXT_MAX_INPUT_TOKENS`,
    );
  }
  if (summarizerInputMaxTokens < 2 * summaryMaxTokens) {
    problems.push(
      `SUMMARY_INPUT_MAX_TOKENS=${summarizerInputMaxTokens} must be at least twice ` +
        `SUMMARY_MAX_TOKENS=${summaryMaxTokens}: each chunk is summarized on top of the summary so far. ` +
        `Try SUMMARY_INPUT_MAX_TOKENS=${2 * summaryMaxTokens} or SUMMARY_MAX_TOKENS=${Math.floor(summarizerInputMaxTokens / 2)}`,
    );
  }
  if (settings.summarizerBudget !== undefined && summarizerInputMaxTokens > settings.summarizerBudget) {
    problems.push(
      `SUMMARY_INPUT_MAX_TOKENS=${summarizerInputMaxTokens} exceeds the summarizer's prompt budget of ` +
        `${settings.summarizerBudget} tokens (it shares the chat model's window: set SUMMARY_MODEL for a larger one). ` +
        `Try SUMMARY_INPUT_MAX_TOKENS=${Math.floor(settings.summarizerBudget * 0.8)}`,
    );
  }
  if (problems.length > 0) return { ok: false, error: problems.join('; ') };
  return {
    ok: true,
    value: { trigger: settings.trigger, keep: settings.keep, summaryMaxTokens, summarizerInputMaxTokens },
  };
}
