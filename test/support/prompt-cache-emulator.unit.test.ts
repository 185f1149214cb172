import { describe, expect, it } from 'vitest';
import { CACHE_MIN_TOKENS, CACHE_STEP_TOKENS, PromptCacheEmulator } from './prompt-cache-emulator';
import { publishedPromptTokens } from './published-token-count';

const words = (count: number, seed: string) => Array.from({ length: count }, (_, index) => `${seed}${index}`).join(' ');
const body = (...contents: string[]) => ({
  model: 'gpt-4o-mini',
  messages: contents.map((content, index) => ({ role: index === 0 ? 'system' : 'user', content })),
});

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
    expect(
      cache.observe({
        ...body(system, 'first question'),
        tools: [{ type: 'function', function: { name: 'calculator' } }],
      }),
    ).toBe(0);
  });

  it('counts in the units of the reported prompt tokens: a changed tail is never reported as cached', () => {
    const cache = new PromptCacheEmulator();
    const tools = Array.from({ length: 6 }, (_, index) => ({
      type: 'function',
      function: {
        name: `tool_${index}`,
        description: words(40, `d${index}`),
        parameters: { type: 'object', properties: { query: { type: 'string', description: words(20, `p${index}`) } } },
      },
    }));
    const history = Array.from({ length: 40 }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: words(30, `m${index}`),
    }));
    const first = {
      model: 'gpt-4o-mini',
      tools,
      messages: [
        { role: 'system', content: words(200, 's') },
        ...history,
        { role: 'user', content: words(300, 'recall-one') },
      ],
    };
    const second = {
      ...first,
      messages: [...first.messages.slice(0, -1), { role: 'user', content: words(300, 'recall-two') }],
    };
    cache.observe(first);
    const prompt = publishedPromptTokens(second);
    const tail = publishedPromptTokens({ model: 'gpt-4o-mini', messages: second.messages.slice(-1) }) - 3;
    const cached = cache.observe(second);
    expect(cached).toBeGreaterThan(0);
    expect(prompt - cached).toBeGreaterThanOrEqual(tail);
    expect(prompt - cached).toBeLessThan(tail + CACHE_STEP_TOKENS);
    // The same prompt again: everything up to the last full step.
    expect(cache.observe(second)).toBe(Math.floor(prompt / CACHE_STEP_TOKENS) * CACHE_STEP_TOKENS);
  });
});
