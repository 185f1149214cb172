import { describe, expect, it } from 'vitest';
import { deriveContextDefaults } from './derive-context-defaults';
import { budgetOf, getModelProfile } from './model-profile';
import { formatCondition } from './policies';
import { validatePolicies, FOLD_HEADROOM } from './validate-policies';

const WINDOWS = [2048, 4096, 8192, 32_768, 128_000, 1_000_000];

function defaultsFor(maxInputTokens: number) {
  const profile = getModelProfile('llama-3', { maxInputTokens });
  return { profile, budget: budgetOf(profile), defaults: deriveContextDefaults(profile, profile.reservedOutputTokens) };
}

function tokenThreshold(maxInputTokens: number, conditions: { kind: string; value: number }[]): number {
  return Math.min(
    ...conditions.map((condition) =>
      condition.kind === 'fraction' ? condition.value * maxInputTokens : condition.value,
    ),
  );
}

describe('deriveContextDefaults', () => {
  it.each(WINDOWS)('gives a %i-token window a configuration the validator accepts', (window) => {
    const { profile, budget, defaults } = defaultsFor(window);
    const validated = validatePolicies({
      trigger: defaults.trigger,
      keep: defaults.keep,
      profile,
      summaryMaxTokens: defaults.summaryMaxTokens,
      summarizerInputMaxTokens: defaults.summarizerInputMaxTokens,
      summarizerBudget: budget,
    });
    expect(validated).toEqual(expect.objectContaining({ ok: true }));
    // A fold starts while at least half the pack is free for the system prefix, pins, tools and the next input.
    expect(tokenThreshold(window, defaults.trigger.conditions)).toBeLessThanOrEqual(budget / 2);
    expect(defaults.pinnedMaxTokens + tokenThreshold(window, defaults.trigger.conditions)).toBeLessThan(budget);
    expect(defaults.toolResultInlineTokens).toBeLessThanOrEqual(budget / 6);
    expect(defaults.summarizerInputMaxTokens).toBeLessThanOrEqual(budget);
    expect(defaults.summaryMaxTokens).toBeGreaterThanOrEqual(64);
  });

  it('keeps the absolute defaults where the window allows them: a 1M window folds at 6,000 tokens, not 750k', () => {
    for (const window of [32_768, 128_000, 1_000_000]) {
      const { profile, defaults } = defaultsFor(window);
      expect(profile.reservedOutputTokens).toBe(4096);
      expect(defaults.trigger.conditions.map(formatCondition)).toEqual(['tokens=6000', 'fraction=0.75']);
      expect(tokenThreshold(window, defaults.trigger.conditions)).toBe(6000);
      expect(formatCondition(defaults.keep)).toBe('messages=12');
      expect(defaults.summaryMaxTokens).toBe(1200);
      expect(defaults.summarizerInputMaxTokens).toBe(6000);
      expect(defaults.toolResultInlineTokens).toBe(800);
    }
  });

  it('derives only what a small window forces', () => {
    const { budget, defaults } = defaultsFor(4096);
    expect(defaults.reservedOutputTokens).toBe(1024);
    expect(budget).toBe(3072);
    expect(defaults.trigger.conditions.map(formatCondition)).toEqual(['tokens=1536', 'fraction=0.75']);
    expect(formatCondition(defaults.keep)).toBe('tokens=614');
    expect(defaults.summaryMaxTokens).toBe(307);
    expect(defaults.summaryMaxTokens + 614).toBeLessThanOrEqual(FOLD_HEADROOM * 1536);
    expect(defaults.summarizerInputMaxTokens).toBe(2457);
    expect(defaults.pinnedMaxTokens).toBe(768);
    expect(defaults.toolResultInlineTokens).toBe(512);
  });

  it('follows an explicit output reserve', () => {
    const profile = getModelProfile('llama-3', { maxInputTokens: 8192, reservedOutputTokens: 512 });
    const defaults = deriveContextDefaults(profile, 512);
    expect(defaults.reservedOutputTokens).toBe(512);
    expect(tokenThreshold(8192, defaults.trigger.conditions)).toBe(3840);
  });
});
