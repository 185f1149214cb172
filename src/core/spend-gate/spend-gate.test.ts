import { describe, expect, it } from 'vitest';
import type { ReserveOutcome, SpendStore, StoredSpendLimits } from '../ports/spend-store';
import { createSpendGate, type SpendGateOptions } from './spend-gate';
import type { SpendLimit } from '../spend/spend-limit';

const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const daily = (amount: number, unit: SpendLimit['unit'] = 'money'): SpendLimit => ({ amount, unit, period: 'day' });

/** A store that answers `limits` and `outcomes` in order, and records what it was asked. */
function fakeStore(limits: Partial<StoredSpendLimits>, outcomes: ReserveOutcome[] = []) {
  const reserved: Parameters<SpendStore['reserve']>[0][] = [];
  const settled: Parameters<SpendStore['settle']>[0][] = [];
  const store: SpendStore = {
    limitsOf: async () => ({
      userKind: 'external',
      user: null,
      groups: [],
      address: null,
      serviceKey: null,
      ...limits,
    }),
    syncClaimGroups: async () => {},
    rememberGuestAddress: async () => {},
    reserve: async (input) => {
      reserved.push(input);
      return outcomes.shift() ?? { outcome: 'ok' };
    },
    settle: async (input) => {
      settled.push(input);
    },
    release: async () => 0,
    usage: async () => ({ spent: { money: 0.25, tokens: 1000 }, reserved: { money: 0.05, tokens: 200 } }),
  };
  return { store, reserved, settled };
}

function gate(store: SpendStore, overrides: Partial<SpendGateOptions> = {}) {
  const refusals: string[] = [];
  const spend = createSpendGate({
    store,
    prices: { chat: { input: 2, cachedInput: 1, output: 8 } },
    defaults: { user: daily(1), guest: daily(0.1), guestsPerAddress: daily(0.5) },
    timeZone: 'UTC',
    chatModel: 'chat',
    holdPromptTokens: 10_000,
    answerCap: 1000,
    holdTtlMs: 60_000,
    callTtlMs: 30_000,
    log: silent,
    now: () => new Date('2026-11-27T12:00:00Z'),
    onRefused: (reason, stage) => refusals.push(`${reason}/${stage}`),
    ...overrides,
  });
  return { spend, refusals };
}

describe('the spend gate', () => {
  it("holds a send's worst case (a full prompt, a full answer, at the chat model's price) on the user's account", async () => {
    const { store, reserved } = fakeStore({ user: daily(3) });
    const { spend } = gate(store);
    expect(await spend.hold({ userId: 'u1' })).toEqual(expect.any(String));
    expect(reserved[0]).toMatchObject({
      userId: 'u1',
      turnId: null,
      accounts: [{ account: 'user:u1', limit: daily(3) }],
      starts: { day: '2026-11-27', week: '2026-11-23', month: '2026-11-01' },
      amount: { money: (10_000 * 2 + 1000 * 8) / 1_000_000, tokens: 11_000 },
      expiresAt: new Date('2026-11-27T12:01:00Z'),
    });
  });

  it('holds nothing, and spends no reservation, when no limit applies', async () => {
    const { store, reserved } = fakeStore({});
    const { spend } = gate(store, { defaults: { user: null, guest: null, guestsPerAddress: daily(1) } });
    // A signed-in user: no default, no address total (that is for guests).
    expect(await spend.hold({ userId: 'u1' })).toBeNull();
    expect(reserved).toEqual([]);
  });

  it("adds a guest's address account, with the per-address total, next to their own", async () => {
    const { store, reserved } = fakeStore({ userKind: 'guest', address: '203.0.113.7' });
    const { spend } = gate(store);
    await spend.hold({ userId: 'g1' });
    expect(reserved[0]?.accounts).toEqual([
      { account: 'user:g1', limit: daily(0.1) },
      { account: 'address:203.0.113.7', limit: daily(0.5) },
    ]);
  });

  it('refuses with SPEND_LIMIT_REACHED naming the limit met and its reset, counted by its source', async () => {
    const { store } = fakeStore({ userKind: 'guest', address: '203.0.113.7' }, [
      { outcome: 'refused', account: 'address:203.0.113.7', limit: daily(0.5) },
      { outcome: 'refused', account: 'user:g1', limit: daily(0.1) },
    ]);
    const { spend, refusals } = gate(store);
    await expect(spend.hold({ userId: 'g1' })).rejects.toMatchObject({
      code: 'SPEND_LIMIT_REACHED',
      message:
        "The guests of your network's spend limit of 0.50 per day is reached; it resets at 2026-11-28T00:00:00.000Z.",
      details: { limit: '0.5/day', scope: 'address', resetsAt: '2026-11-28T00:00:00.000Z' },
    });
    await expect(spend.hold({ userId: 'g1' })).rejects.toMatchObject({
      message: 'Your spend limit of 0.10 per day is reached; it resets at 2026-11-28T00:00:00.000Z.',
    });
    expect(refusals).toEqual(['address/send', 'default/send']);
  });

  it("holds an end user of a service key on the key's account too, and names the key's limit when it is met", async () => {
    const userId = 'svc-0123456789abcdef:alice';
    const { store, reserved } = fakeStore({ serviceKey: daily(5) }, [
      { outcome: 'ok' },
      { outcome: 'refused', account: 'service-key:0123456789abcdef', limit: daily(5) },
    ]);
    const { spend, refusals } = gate(store);
    await spend.hold({ userId });
    expect(reserved[0]?.accounts).toEqual([
      { account: `user:${userId}`, limit: daily(1) },
      { account: 'service-key:0123456789abcdef', limit: daily(5) },
    ]);
    await expect(spend.hold({ userId })).rejects.toMatchObject({
      code: 'SPEND_LIMIT_REACHED',
      message:
        "Your application's (all its users together) spend limit of 5.00 per day is reached; it resets at 2026-11-28T00:00:00.000Z.",
      details: { scope: 'service-key' },
    });
    expect(refusals).toEqual(['service-key/send']);
  });

  it('holds nothing for a service key user when neither they nor their key have a limit', async () => {
    const { store, reserved } = fakeStore({});
    const { spend } = gate(store, { defaults: { user: null, guest: null, guestsPerAddress: null } });
    expect(await spend.hold({ userId: 'svc-0123456789abcdef:alice' })).toBeNull();
    expect(reserved).toEqual([]);
  });

  it("reserves a call's own worst case on the turn, resolving the limits only when the turn holds nothing to adjust", async () => {
    const { store, reserved } = fakeStore({ groups: [{ group: 'team', limit: daily(2) }] }, [
      { outcome: 'missing' },
      { outcome: 'ok' },
      { outcome: 'ok' },
    ]);
    const { spend } = gate(store);
    expect(await spend.reserveCall({ turnId: 't1', userId: 'u1', model: 'chat', promptTokens: 500 })).toBe(true);
    expect(reserved.map((input) => input.accounts)).toEqual([null, [{ account: 'user:u1', limit: daily(2) }]]);
    expect(reserved[1]).toMatchObject({
      turnId: 't1',
      amount: { money: (500 * 2 + 1000 * 8) / 1_000_000, tokens: 1500 },
    });
    await spend.reserveCall({ turnId: 't1', userId: 'u1', model: 'chat', promptTokens: 700 });
    expect(reserved[2]).toMatchObject({ accounts: null, amount: { tokens: 1700 } });
  });

  it('settles a call to what its record holds, on the day of the spend time zone, and never fails the turn', async () => {
    const { store, settled } = fakeStore({});
    const { spend } = gate(store, { timeZone: 'Pacific/Kiritimati' });
    await spend.settleCall({
      turnId: 't1',
      userId: 'u1',
      call: {
        model: 'chat',
        estimatedPromptTokens: 90,
        reportedPromptTokens: 100,
        reportedCompletionTokens: 10,
        answerTokens: 9,
      },
    });
    expect(settled[0]).toEqual({
      turnId: 't1',
      userId: 'u1',
      threadId: null,
      day: '2026-11-28',
      amount: { money: (100 * 2 + 10 * 8) / 1_000_000, tokens: 110 },
    });
    store.settle = async () => {
      throw new Error('database down');
    };
    await expect(
      spend.settleCall({
        turnId: null,
        userId: 'u1',
        call: { model: 'x', estimatedPromptTokens: 1, reportedPromptTokens: null, reportedCompletionTokens: null },
      }),
    ).resolves.toBeUndefined();
  });

  it("reads the user's usage in the unit and period of their limit", async () => {
    const { store } = fakeStore({ user: { amount: 5000, unit: 'tokens', period: 'week' } });
    const { spend } = gate(store);
    expect(await spend.usageOf('u1')).toEqual({
      unit: 'tokens',
      spent: 1000,
      reserved: 200,
      limit: 5000,
      remaining: 3800,
      period: 'week',
      periodStart: '2026-11-23',
      resetsAt: '2026-11-30T00:00:00.000Z',
      written: '5000tokens/week',
      perSend: 11_000,
    });
  });

  it('defers a fold to the reset while the owner cannot send, and not while they can or have no limit', async () => {
    // Spent 0.25 + reserved 0.05 of a day's 0.30: nothing left, less than a send's 0.028 hold.
    const spentOut = gate(fakeStore({ user: daily(0.3) }).store).spend;
    expect(await spentOut.foldDeferredUntil('u1')).toEqual(new Date('2026-11-28T00:00:00.000Z'));
    // 0.70 left of 1.00: a send fits, so does the fold.
    const room = gate(fakeStore({ user: daily(1) }).store).spend;
    expect(await room.foldDeferredUntil('u1')).toBeNull();
    // 0.02 left: a fold might fit but no turn can come before the reset, so none needs it earlier.
    const nearly = gate(fakeStore({ user: daily(0.32) }).store).spend;
    expect(await nearly.foldDeferredUntil('u1')).toEqual(new Date('2026-11-28T00:00:00.000Z'));
    const unlimited = gate(fakeStore({}).store, {
      defaults: { user: null, guest: null, guestsPerAddress: null },
    }).spend;
    expect(await unlimited.foldDeferredUntil('u1')).toBeNull();
  });
});
