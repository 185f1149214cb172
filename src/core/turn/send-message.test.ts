import { describe, expect, it } from 'vitest';
import { createTokenCounter } from '../context';
import type { ContextSettings } from '../thread-context/context-settings';
import { createMemoryRateLimiter } from '../limits/rate-limiter';
import { AppError } from '../errors/app-error';
import type { TurnStore } from '../ports';
import type { SpendGate } from '../spend-gate/spend-gate';
import { prepareUserMessage, sendMessage, type SendMessageDeps } from './send-message';

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

describe('sendMessage and its spend hold', () => {
  /** A spend gate that records its holds and their release. */
  function spendDeps(accept: (input: Parameters<SendMessageDeps['turns']['acceptUserMessage']>[0]) => unknown) {
    const held: string[] = [];
    const released: string[] = [];
    const spend = {
      hold: async () => {
        const id = `hold-${held.length + 1}`;
        held.push(id);
        return id;
      },
      releaseHold: async (id: string) => {
        released.push(id);
      },
    } as unknown as SpendGate;
    const turns = { acceptUserMessage: async (input: never) => accept(input) } as unknown as TurnStore;
    return { held, released, deps: { ...deps(10_000), turns, maxQueuedTurns: 5, spend } satisfies SendMessageDeps };
  }
  const accepted = (duplicate: boolean) => ({
    message: { id: 'm' },
    turn: { id: 't', threadId: 'th' },
    duplicate,
  });

  it('keeps the hold of a stored send (its turn claims it) and gives back the hold of a repeated clientMessageId', async () => {
    const fresh = spendDeps(() => accepted(false));
    await sendMessage({ userId: 'u1', threadId: 'th', content: 'hello' }, fresh.deps);
    expect([fresh.held, fresh.released]).toEqual([['hold-1'], []]);
    const repeated = spendDeps(() => accepted(true));
    await sendMessage({ userId: 'u1', threadId: 'th', content: 'hello', clientMessageId: 'c1' }, repeated.deps);
    expect([repeated.held, repeated.released]).toEqual([['hold-1'], ['hold-1']]);
  });

  it("gives back the hold of a send the accept refused (a busy thread, a thread not the user's)", async () => {
    const busy = spendDeps(() => {
      throw new AppError('BUSY', 'This thread already has 5 message(s) waiting.');
    });
    await expect(sendMessage({ userId: 'u1', threadId: 'th', content: 'hello' }, busy.deps)).rejects.toMatchObject({
      code: 'BUSY',
    });
    expect(busy.released).toEqual(['hold-1']);
  });

  it('takes no hold for a send refused by its own checks', async () => {
    const invalid = spendDeps(() => accepted(false));
    await expect(sendMessage({ userId: 'u1', threadId: 'th', content: '   ' }, invalid.deps)).rejects.toMatchObject({
      code: 'VALIDATION',
    });
    expect(invalid.held).toEqual([]);
  });
});
