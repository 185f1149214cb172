import { CACHE_WRITE_FACTOR, costOf, type ModelPrice, type ModelPrices } from '../costs/estimate-costs';
import type { SpendAmount } from './spend-limit';

/** The figures of one model call as its model_calls row records them. */
export interface RecordedCallFigures {
  model: string;
  estimatedPromptTokens: number;
  reportedPromptTokens: number | null;
  reportedCompletionTokens: number | null;
  reportedCachedTokens?: number | null;
  /** Prompt tokens the provider reported writing to its cache (priced at `cacheWrite`). */
  reportedCacheWriteTokens?: number | null;
  /** The answer's counted tokens (a chat call's message), for a call whose provider reported no completion tokens. */
  answerTokens?: number | null;
}

/**
 * A call's usage exactly as the admin costs read its row (src/db/cost-report.ts): the reported prompt tokens (our
 * estimate where none, or 0, was reported), the reported cached ones (0 where none), the reported completion tokens
 * (the answer's counted tokens where none). Spending is counted from the same numbers, so the two agree.
 */
export function recordedUsage(call: RecordedCallFigures): {
  promptTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  completionTokens: number;
} {
  return {
    promptTokens: call.reportedPromptTokens || call.estimatedPromptTokens,
    cachedTokens: call.reportedCachedTokens ?? 0,
    cacheWriteTokens: call.reportedCacheWriteTokens ?? 0,
    completionTokens: call.reportedCompletionTokens ?? call.answerTokens ?? 0,
  };
}

/**
 * What a call's usage spends: money at the model's price (0 for a model without one), and tokens, input plus output
 * with cached input (and cache writes) counted at their price's share of the input price when the model has a price
 * (as input otherwise).
 */
export function spendOfUsage(
  usage: { promptTokens: number; cachedTokens: number; cacheWriteTokens?: number; completionTokens: number },
  price: ModelPrice | undefined,
): SpendAmount {
  const cached = Math.min(usage.cachedTokens, usage.promptTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.promptTokens - cached);
  const ratio = price && price.input > 0 ? price.cachedInput / price.input : 1;
  const writeRatio =
    price && price.input > 0 ? (price.cacheWrite ?? price.input * CACHE_WRITE_FACTOR) / price.input : 1;
  return {
    money: price ? costOf(usage, price) : 0,
    tokens: usage.promptTokens - cached - written + cached * ratio + written * writeRatio + usage.completionTokens,
  };
}

/** What a recorded call spends (see recordedUsage and spendOfUsage). */
export function spendOfCall(call: RecordedCallFigures, prices: ModelPrices): SpendAmount {
  return spendOfUsage(recordedUsage(call), prices[call.model]);
}

/**
 * A call's worst case before it is made: its whole prompt uncached (with `writesCache`, a provider billing cache writes
 * such as Anthropic: its whole prompt written, at the write price), and an answer as long as its cap.
 */
export function worstCaseOf(
  input: { model: string; promptTokens: number; answerCap: number; writesCache?: boolean },
  prices: ModelPrices,
): SpendAmount {
  return spendOfUsage(
    {
      promptTokens: input.promptTokens,
      cachedTokens: 0,
      cacheWriteTokens: input.writesCache ? input.promptTokens : 0,
      completionTokens: input.answerCap,
    },
    prices[input.model],
  );
}
