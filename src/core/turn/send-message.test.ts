import { describe, expect, it } from 'vitest';
import { createTokenCounter } from '../context';
import type { ContextSettings } from '../context-settings';
import { createMemoryRateLimiter } from '../limits/rate-limiter';
import { prepareUserMessage } from './send-message';

const counter = createTokenCounter('o200k_base');
const systemPrefix = 'You are a helpful assistant.';

function deps(budget: number) {
  return {
    sendLimiter: createMemoryRateLimiter({ limit: 100 }),
    settings: { counter, budget, systemPrefix } as unknown as ContextSettings,
    maxMessageChars: 32_000,
  };
}

describe('prepareUserMessage and the budget', () => {
  const long = 'The venue on the river has a terrace for forty people. '.repeat(570);

  it('accepts a message longer than the budget: the pack carries it condensed', async () => {
    const prepared = await prepareUserMessage({ userId: 'u1', content: long }, deps(1_536));
    expect(prepared.tokens).toBeGreaterThan(1_536);
    expect(prepared.content).toBe(long);
  });

  it('refuses before anything is stored, naming the budget and the size, where not even a condensed form fits', async () => {
    const error = await prepareUserMessage({ userId: 'u1', content: long }, deps(100)).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'TOO_LARGE' });
    expect((error as Error).message).toMatch(/^The message is \d+ tokens; this chat's budget of 100 tokens leaves \d+/);
    // A message that fits whole is accepted under the same budget.
    await expect(prepareUserMessage({ userId: 'u1', content: 'hello' }, deps(100))).resolves.toMatchObject({
      content: 'hello',
    });
  });
});
