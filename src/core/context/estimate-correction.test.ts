import { describe, expect, it } from 'vitest';
import { correctedBudget, createEstimateCorrection } from './estimate-correction';

describe('createEstimateCorrection', () => {
  it('starts neutral and learns a tokenizer that counts higher', () => {
    const correction = createEstimateCorrection({ model: 'llama' });
    expect([correction.factor, correction.observedRatio, correction.samples]).toEqual([1, null, 0]);
    for (let call = 0; call < 30; call += 1) correction.observe(1000, 1250);
    expect(correction.factor).toBeCloseTo(1.25, 3);
    expect(correction.samples).toBe(30);
  });

  it('never goes below 1: a provider that counts lower does not loosen the budget guard', () => {
    const correction = createEstimateCorrection({ model: 'm' });
    for (let call = 0; call < 10; call += 1) correction.observe(1000, 700);
    expect(correction.observedRatio).toBeCloseTo(0.7, 2);
    expect(correction.factor).toBe(1);
  });

  it('is clamped at maxFactor and moves only part of the way on one odd report', () => {
    const correction = createEstimateCorrection({ model: 'm', maxFactor: 1.5, weight: 0.2 });
    correction.observe(1000, 1100);
    correction.observe(1000, 100_000);
    expect(correction.factor).toBe(1.5);
    const steady = createEstimateCorrection({ model: 'm' });
    for (let call = 0; call < 20; call += 1) steady.observe(1000, 1100);
    steady.observe(1000, 3000);
    expect(steady.factor).toBeGreaterThan(1.1);
    expect(steady.factor).toBeLessThan(1.5);
  });

  it('ignores small prompts and nonsense reports', () => {
    const correction = createEstimateCorrection({ model: 'm', minPromptTokens: 64 });
    correction.observe(20, 60);
    correction.observe(1000, 0);
    correction.observe(Number.NaN, 1000);
    expect(correction.samples).toBe(0);
    expect(correction.factor).toBe(1);
  });
});

describe('createEstimateCorrection with many users (one factor for the chat model)', () => {
  it("is not pushed to maxFactor by one user's heavily tokenizing text: the median over users counts", () => {
    const correction = createEstimateCorrection({ model: 'llama', maxFactor: 1.5 });
    for (let round = 0; round < 3; round += 1) {
      for (let user = 0; user < 20; user += 1) correction.observe(1000, 1050, `user-${user}`);
    }
    // One user sends emoji-heavy text the provider's tokenizer counts three times higher, call after call.
    for (let call = 0; call < 40; call += 1) correction.observe(1000, 3000, 'emoji-user');
    expect(correction.factor).toBeGreaterThanOrEqual(1);
    expect(correction.factor).toBeLessThan(1.1);
  });

  it('still learns a tokenizer that counts higher for most users, and forgets users not heard lately', () => {
    const correction = createEstimateCorrection({ model: 'llama', maxSources: 5 });
    for (let user = 0; user < 5; user += 1) correction.observe(1000, 3000, `old-${user}`);
    expect(correction.factor).toBe(1.5);
    for (let round = 0; round < 10; round += 1) {
      for (let user = 0; user < 5; user += 1) correction.observe(1000, 1250, `user-${user}`);
    }
    expect(correction.factor).toBeCloseTo(1.25, 2);
  });
});

describe('correctedBudget', () => {
  it('keeps estimate × factor within the budget', () => {
    expect(correctedBudget(10_000, 1)).toBe(10_000);
    expect(correctedBudget(10_000, 1.25)).toBe(8000);
    for (const factor of [1.01, 1.1, 1.33, 1.5])
      expect(correctedBudget(7777, factor) * factor).toBeLessThanOrEqual(7777);
  });
});
