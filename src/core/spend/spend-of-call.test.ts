import { describe, expect, it } from 'vitest';
import { costOf, type ModelPrices } from '../costs/estimate-costs';
import { recordedUsage, spendOfCall, worstCaseOf } from './spend-of-call';

const prices: ModelPrices = { priced: { input: 2, cachedInput: 0.5, output: 8 } };

describe('what a call spends', () => {
  it('reads the call as the admin costs do: reported figures, else our estimate and the answer tokens', () => {
    expect(
      recordedUsage({
        model: 'priced',
        estimatedPromptTokens: 900,
        reportedPromptTokens: 1000,
        reportedCompletionTokens: 50,
        reportedCachedTokens: 400,
        answerTokens: 48,
      }),
    ).toEqual({ promptTokens: 1000, cachedTokens: 400, cacheWriteTokens: 0, completionTokens: 50 });
    // No report (or a report of 0 prompt tokens): our estimate, no cached tokens, the answer's counted tokens.
    for (const reported of [null, 0])
      expect(
        recordedUsage({
          model: 'priced',
          estimatedPromptTokens: 900,
          reportedPromptTokens: reported,
          reportedCompletionTokens: null,
          answerTokens: 48,
        }),
      ).toEqual({ promptTokens: 900, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 48 });
    // A failed call: its prompt only.
    expect(
      recordedUsage({
        model: 'x',
        estimatedPromptTokens: 10,
        reportedPromptTokens: null,
        reportedCompletionTokens: null,
      }),
    ).toEqual({ promptTokens: 10, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 0 });
  });

  it("prices it as the costs do and counts cached input tokens at the cached price's share", () => {
    const call = {
      model: 'priced',
      estimatedPromptTokens: 0,
      reportedPromptTokens: 1_000_000,
      reportedCompletionTokens: 100_000,
      reportedCachedTokens: 800_000,
    };
    const spend = spendOfCall(call, prices);
    expect(spend.money).toBeCloseTo(
      costOf({ promptTokens: 1_000_000, cachedTokens: 800_000, completionTokens: 100_000 }, prices.priced!),
    );
    expect(spend.money).toBeCloseTo(0.4 + 0.4 + 0.8);
    // 200,000 uncached + 800,000 at a quarter + 100,000 output.
    expect(spend.tokens).toBe(200_000 + 200_000 + 100_000);
    // An unpriced model: no money, every input token counted whole.
    expect(spendOfCall({ ...call, model: 'unpriced' }, prices)).toEqual({ money: 0, tokens: 1_100_000 });
  });

  it('prices cache writes at cacheWrite (1.25x the input by default) and counts them at that share in tokens', () => {
    const call = {
      model: 'priced',
      estimatedPromptTokens: 0,
      reportedPromptTokens: 1_000_000,
      reportedCompletionTokens: 0,
      reportedCachedTokens: 600_000,
      reportedCacheWriteTokens: 300_000,
    };
    // 100,000 uncached at 2, 600,000 read at 0.5, 300,000 written at 2.5.
    expect(spendOfCall(call, prices).money).toBeCloseTo(0.2 + 0.3 + 0.75);
    expect(spendOfCall(call, prices).tokens).toBe(100_000 + 150_000 + 375_000);
    const explicit: ModelPrices = { priced: { input: 2, cachedInput: 0.5, cacheWrite: 4, output: 8 } };
    expect(spendOfCall(call, explicit).money).toBeCloseTo(0.2 + 0.3 + 1.2);
  });

  it('takes the worst case of a call as its whole prompt uncached and an answer at its cap', () => {
    expect(worstCaseOf({ model: 'priced', promptTokens: 1000, answerCap: 500 }, prices)).toEqual({
      money: (1000 * 2 + 500 * 8) / 1_000_000,
      tokens: 1500,
    });
    // A provider billing cache writes (Anthropic): the whole prompt written at 1.25x the input price.
    expect(worstCaseOf({ model: 'priced', promptTokens: 1000, answerCap: 500, writesCache: true }, prices)).toEqual({
      money: (1000 * 2 * 1.25 + 500 * 8) / 1_000_000,
      tokens: 1250 + 500,
    });
  });
});
