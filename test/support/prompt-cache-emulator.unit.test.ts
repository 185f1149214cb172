import { describe, expect, it } from 'vitest';
import { CACHE_MIN_TOKENS, CACHE_STEP_TOKENS, PromptCacheEmulator } from './prompt-cache-emulator';

const words = (count: number, seed: string) => Array.from({ length: count }, (_, index) => `${seed}${index}`).join(' ');
const body = (...contents: string[]) => ({ model: 'gpt-4o-mini', messages: contents.map((content, index) => ({ role: index === 0 ? 'system' : 'user', content })) });

describe('PromptCacheEmulator (OpenAI: shared prefix of at least 1,024 tokens, 128-token steps)', () => {
  it('caches nothing below 1,024 tokens or on a first prompt', () => {
    const cache = new PromptCacheEmulator();
    expect(cache.observe(body(words(100, 'a')))).toBe(0);
    expect(cache.observe(body(words(100, 'a')))).toBe(0);
    expect(cache.observe(body(words(1500, 'b')))).toBe(0);
  });

  it('counts the longest shared prefix in 128-token steps, from 1,024 on, per model', () => {
    const cache = new PromptCacheEmulator();
    const system = words(1500, 'w');
    cache.observe(body(system, 'first question'));
    const second = cache.observe(body(system, 'first question', 'second question'));
    expect(second).toBeGreaterThanOrEqual(CACHE_MIN_TOKENS);
    expect(second % CACHE_STEP_TOKENS).toBe(0);
    // A changed earlier message ends the shared prefix there.
    expect(cache.observe(body(`${words(10, 'x')} ${system}`, 'first question'))).toBe(0);
    expect(cache.observe({ ...body(system, 'first question'), model: 'gpt-4o' })).toBe(0);
    // Another tool list changes what comes first.
    expect(cache.observe({ ...body(system, 'first question'), tools: [{ type: 'function', function: { name: 'calculator' } }] })).toBe(0);
  });
});
