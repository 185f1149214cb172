import { describe, expect, it } from 'vitest';
import { cachedShare, costOf, costRow, type ModelPrices } from './estimate-costs';

const prices: ModelPrices = { 'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 } };

describe('estimated costs', () => {
  it('prices uncached prompt tokens, cached ones and completions per million', () => {
    expect(
      costOf({ promptTokens: 1_000_000, cachedTokens: 0, completionTokens: 0 }, prices['gpt-4o-mini']!),
    ).toBeCloseTo(0.15);
    expect(
      costOf({ promptTokens: 1_000_000, cachedTokens: 800_000, completionTokens: 100_000 }, prices['gpt-4o-mini']!),
    ).toBeCloseTo(0.03 + 0.06 + 0.06);
    // A report of more cached than prompt tokens never makes the prompt cost negative.
    expect(costOf({ promptTokens: 100, cachedTokens: 500, completionTokens: 0 }, prices['gpt-4o-mini']!)).toBeCloseTo(
      (100 * 0.075) / 1_000_000,
    );
  });

  it('sums a group over its models, counts estimated calls, and lists the models without a price', () => {
    const row = costRow(
      {
        key: '2026-11-25',
        label: '2026-11-25',
        usage: [
          {
            model: 'gpt-4o-mini',
            calls: 3,
            promptTokens: 2_000_000,
            cachedTokens: 1_000_000,
            completionTokens: 0,
            estimatedCalls: 1,
            cacheReportedPromptTokens: 1_600_000,
            cacheReportedCachedTokens: 1_000_000,
          },
          {
            model: 'local-llama',
            calls: 2,
            promptTokens: 500,
            cachedTokens: 0,
            completionTokens: 50,
            estimatedCalls: 2,
            cacheReportedPromptTokens: 0,
            cacheReportedCachedTokens: 0,
          },
        ],
      },
      prices,
    );
    expect(row).toMatchObject({
      calls: 5,
      promptTokens: 2_000_500,
      cachedTokens: 1_000_000,
      completionTokens: 50,
      estimatedCalls: 3,
      unpricedModels: ['local-llama'],
    });
    expect(row.cost).toBeCloseTo(0.15 + 0.075);
    // The share counts only the prompt tokens of the calls that reported their cached tokens: 1,000,000 of 1,600,000.
    expect(row.cachedShare).toBeCloseTo(0.625);
    expect(
      costRow(
        {
          key: 'u',
          label: 'u',
          usage: [
            {
              model: 'local-llama',
              calls: 1,
              promptTokens: 1,
              cachedTokens: 0,
              completionTokens: 1,
              estimatedCalls: 0,
              cacheReportedPromptTokens: 0,
              cacheReportedCachedTokens: 0,
            },
          ],
        },
        prices,
      ).cost,
    ).toBeNull();
  });

  it('computes the cached share over the calls that reported it, null when none did', () => {
    // 900 cached of the 1,000 prompt tokens of the calls that reported them; a model whose calls reported none adds nothing.
    expect(
      cachedShare([
        { cacheReportedPromptTokens: 1_000, cacheReportedCachedTokens: 900 },
        { cacheReportedPromptTokens: 0, cacheReportedCachedTokens: 0 },
      ]),
    ).toBeCloseTo(0.9);
    expect(cachedShare([{ cacheReportedPromptTokens: 1_000, cacheReportedCachedTokens: 0 }])).toBe(0);
    expect(cachedShare([{ cacheReportedPromptTokens: 0, cacheReportedCachedTokens: 0 }])).toBeNull();
    expect(cachedShare([])).toBeNull();
  });
});
