import { describe, expect, it } from 'vitest';
import { budgetOf, getModelProfile, UNKNOWN_MODEL_PROFILE } from './model-profile';

describe('getModelProfile', () => {
  it.each([
    ['gpt-4o', 'o200k_base', 128_000, 16_384, true],
    ['gpt-4o-2024-08-06', 'o200k_base', 128_000, 16_384, true],
    ['gpt-4o-mini', 'o200k_base', 128_000, 16_384, true],
    ['gpt-4.1', 'o200k_base', 1_047_576, 32_768, true],
    ['gpt-4.1-mini', 'o200k_base', 1_047_576, 32_768, true],
    ['gpt-4.1-nano-2025-04-14', 'o200k_base', 1_047_576, 32_768, true],
    ['gpt-5', 'o200k_base', 272_000, 128_000, false],
    ['gpt-5-mini', 'o200k_base', 272_000, 128_000, false],
    ['gpt-5.1', 'o200k_base', 272_000, 128_000, false],
    ['o1', 'o200k_base', 200_000, 100_000, false],
    ['o3', 'o200k_base', 200_000, 100_000, false],
    ['o3-mini', 'o200k_base', 200_000, 100_000, false],
    ['o4-mini', 'o200k_base', 200_000, 100_000, false],
    ['gpt-4', 'cl100k_base', 8192, 8192, true],
    ['gpt-4-0613', 'cl100k_base', 8192, 8192, true],
    ['gpt-4-turbo', 'cl100k_base', 128_000, 4096, true],
    ['gpt-4-turbo-2024-04-09', 'cl100k_base', 128_000, 4096, true],
    ['gpt-3.5-turbo', 'cl100k_base', 16_385, 4096, true],
    ['openai/gpt-4o-mini', 'o200k_base', 128_000, 16_384, true],
    ['GPT-4o', 'o200k_base', 128_000, 16_384, true],
    ['claude-opus-4-1-20250805', 'o200k_base', 200_000, 32_000, true],
    ['claude-opus-4-5', 'o200k_base', 200_000, 64_000, true],
    ['claude-sonnet-4-5-20250929', 'o200k_base', 200_000, 64_000, true],
    ['claude-sonnet-4-20250514', 'o200k_base', 200_000, 64_000, true],
    ['claude-haiku-4-5', 'o200k_base', 200_000, 64_000, true],
    ['claude-3-5-haiku-latest', 'o200k_base', 200_000, 8192, true],
    ['anthropic/claude-3-7-sonnet-latest', 'o200k_base', 200_000, 64_000, true],
  ] as const)('%s -> %s, %i in, %i out, temperature %s', (name, encoding, maxIn, maxOut, temperature) => {
    const profile = getModelProfile(name);
    expect(profile).toMatchObject({
      name,
      encoding,
      maxInputTokens: maxIn,
      maxOutputTokens: maxOut,
      acceptsTemperature: temperature,
    });
  });

  it('defaults unknown models to o200k_base and a conservative 128k window', () => {
    for (const name of ['llama3.1:8b', 'o10', 'gpt-4x', '']) {
      const profile = getModelProfile(name);
      expect(profile.encoding).toBe('o200k_base');
      expect(profile.maxInputTokens).toBe(UNKNOWN_MODEL_PROFILE.maxInputTokens);
      expect(profile.maxInputTokens).toBe(128_000);
    }
  });

  it('reserves a quarter of a small window for the reply by default', () => {
    expect(getModelProfile('gpt-4o', { maxInputTokens: 4096 }).reservedOutputTokens).toBe(1024);
    expect(getModelProfile('llama', { maxInputTokens: 2048 }).reservedOutputTokens).toBe(512);
    expect(getModelProfile('gpt-4').reservedOutputTokens).toBe(2048);
    expect(getModelProfile('gpt-4o', { maxInputTokens: 16_384 }).reservedOutputTokens).toBe(4096);
  });

  it('reserves min(max output, 4096) for the reply by default', () => {
    expect(getModelProfile('gpt-4o').reservedOutputTokens).toBe(4096);
    expect(getModelProfile('gpt-3.5-turbo').reservedOutputTokens).toBe(4096);
    expect(getModelProfile('llama').reservedOutputTokens).toBe(4096);
  });

  it('applies config overrides', () => {
    const profile = getModelProfile('gpt-4o', { maxInputTokens: 32_000, reservedOutputTokens: 1000 });
    expect(profile.maxInputTokens).toBe(32_000);
    expect(profile.reservedOutputTokens).toBe(1000);
    expect(budgetOf(profile)).toBe(31_000);
  });

  it('rejects overrides that leave no budget', () => {
    expect(() => getModelProfile('gpt-4o', { maxInputTokens: 4000, reservedOutputTokens: 4096 })).toThrow(
      /reservedOutputTokens \(4096\) must be below/,
    );
    expect(() => getModelProfile('gpt-4o', { maxInputTokens: 0 })).toThrow(RangeError);
    expect(() => getModelProfile('gpt-4o', { reservedOutputTokens: 1.5 })).toThrow(/positive integer/);
  });
});

describe('budgetOf', () => {
  it('is max input minus reserved output', () => {
    expect(budgetOf(getModelProfile('gpt-4o'))).toBe(128_000 - 4096);
    // Reasoning models keep room for hidden reasoning and an answer.
    expect(budgetOf(getModelProfile('gpt-5'))).toBe(272_000 - 25_000);
    expect(getModelProfile('o3').reservedOutputTokens).toBe(25_000);
    // A small window still gets a quarter at most.
    expect(getModelProfile('o4-mini', { maxInputTokens: 32_000 }).reservedOutputTokens).toBe(8000);
    expect(budgetOf(getModelProfile('gpt-4'))).toBe(8192 - 2048);
  });
});
