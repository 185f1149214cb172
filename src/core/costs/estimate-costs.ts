/** A model's prices in money per million tokens (MODEL_PRICES); the currency is the deployment's own. */
export interface ModelPrice {
  input: number;
  /** Prompt tokens the provider read from its prompt cache. */
  cachedInput: number;
  /**
   * Prompt tokens the provider wrote to its prompt cache (Anthropic's `cache_creation_input_tokens`), at the price of
   * the deployment's cache lifetime (MODEL_PRICES `cacheWrite` or `cacheWrite1h`); default 1.25× the input price.
   */
  cacheWrite?: number;
  output: number;
}

/** Prices by model name. No price is built in: a model without one has no cost, only tokens. */
export type ModelPrices = Readonly<Record<string, ModelPrice>>;

/** One model's usage within a group (a thread, a user, a day), from the model-call records. */
export interface ModelUsage {
  model: string;
  calls: number;
  /** Reported prompt tokens, or our estimate for calls without a report. */
  promptTokens: number;
  /** Reported cached prompt tokens (0 where none were reported). */
  cachedTokens: number;
  /** Reported prompt tokens written to the provider's cache (0 where none were reported). */
  cacheWriteTokens?: number;
  /** Reported completion tokens, or the answer's counted tokens for calls without a report. */
  completionTokens: number;
  /** Calls whose prompt or completion tokens are our estimate (no usage reported). */
  estimatedCalls: number;
  /**
   * Reported prompt tokens of the calls whose provider reported both its prompt tokens and its cached tokens: the
   * cached share's denominator (a call without that report would dilute the share with tokens of unknown caching).
   */
  cacheReportedPromptTokens: number;
  /** Reported cached prompt tokens of those same calls (each at most its prompt tokens): the cached share's numerator. */
  cacheReportedCachedTokens: number;
}

export interface CostRow {
  key: string;
  label: string;
  calls: number;
  promptTokens: number;
  cachedTokens: number;
  /** Prompt tokens the provider reported writing to its cache. */
  cacheWriteTokens: number;
  completionTokens: number;
  /** Estimated cost of the priced models' calls; null when none of the group's models has a price. */
  cost: number | null;
  /** Calls counted from our estimate instead of a usage report. */
  estimatedCalls: number;
  /** Models of the group without a price (their tokens are counted, not priced). */
  unpricedModels: string[];
  /** See `cachedShare`: null when no call of the group reported its cached tokens. */
  cachedShare: number | null;
}

/**
 * The share of prompt tokens the provider served from its prompt cache, over the calls that reported both their
 * prompt and their cached tokens (calls without a usage report, or reporting no cached tokens, are left out of the
 * numerator and the denominator alike); null when no call reported them.
 */
export function cachedShare(
  usage: readonly Pick<ModelUsage, 'cacheReportedPromptTokens' | 'cacheReportedCachedTokens'>[],
): number | null {
  let prompt = 0;
  let cached = 0;
  for (const entry of usage) {
    prompt += entry.cacheReportedPromptTokens;
    cached += entry.cacheReportedCachedTokens;
  }
  return prompt > 0 ? Math.min(cached, prompt) / prompt : null;
}

/** Default price of a cache write against the input price (Anthropic's 5-minute entries). */
export const CACHE_WRITE_FACTOR = 1.25;

/**
 * The cost of one model's usage: uncached prompt tokens at the input price, cached ones at the cached price, those
 * written to the cache at the cache-write price.
 */
export function costOf(
  usage: Pick<ModelUsage, 'promptTokens' | 'cachedTokens' | 'cacheWriteTokens' | 'completionTokens'>,
  price: ModelPrice,
): number {
  const cached = Math.min(usage.cachedTokens, usage.promptTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.promptTokens - cached);
  return (
    ((usage.promptTokens - cached - written) * price.input +
      cached * price.cachedInput +
      written * (price.cacheWrite ?? price.input * CACHE_WRITE_FACTOR) +
      usage.completionTokens * price.output) /
    1_000_000
  );
}

/** Sums a group's usage per model into one row, priced where MODEL_PRICES knows the model. */
export function costRow(
  group: { key: string; label: string; usage: readonly ModelUsage[] },
  prices: ModelPrices,
): CostRow {
  const row: CostRow = {
    key: group.key,
    label: group.label,
    calls: 0,
    promptTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    completionTokens: 0,
    cost: null,
    estimatedCalls: 0,
    unpricedModels: [],
    cachedShare: cachedShare(group.usage),
  };
  for (const usage of group.usage) {
    row.calls += usage.calls;
    row.promptTokens += usage.promptTokens;
    row.cachedTokens += usage.cachedTokens;
    row.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    row.completionTokens += usage.completionTokens;
    row.estimatedCalls += usage.estimatedCalls;
    const price = prices[usage.model];
    if (price) row.cost = (row.cost ?? 0) + costOf(usage, price);
    else if (!row.unpricedModels.includes(usage.model)) row.unpricedModels.push(usage.model);
  }
  return row;
}
