import { describe, expect, it } from 'vitest';
import { resolveSpendLimit, type SpendLimitCandidates } from './resolve-spend-limit';
import type { SpendLimit } from './spend-limit';

const money = (amount: number, period: SpendLimit['period'] = 'day'): SpendLimit => ({ amount, unit: 'money', period });
const tokens = (amount: number, period: SpendLimit['period'] = 'day'): SpendLimit => ({
  amount,
  unit: 'tokens',
  period,
});
const base: SpendLimitCandidates = {
  userKind: 'external',
  user: null,
  groups: [],
  defaults: { user: money(1), guest: money(0.1) },
  moneyPerToken: 0.15 / 1_000_000,
};

describe('resolveSpendLimit', () => {
  it("takes the user's own limit over their groups' and the default, even when it is smaller", () => {
    const resolved = resolveSpendLimit({
      ...base,
      user: money(0.01),
      groups: [{ group: 'research', limit: money(50) }],
    });
    expect(resolved).toEqual({ limit: money(0.01), source: { kind: 'user' } });
  });

  it("takes the largest of the user's groups' limits over the default, even when smaller than the default", () => {
    expect(
      resolveSpendLimit({
        ...base,
        groups: [
          { group: 'interns', limit: money(0.2) },
          { group: 'research', limit: money(0.5) },
        ],
      }),
    ).toEqual({ limit: money(0.5), source: { kind: 'group', group: 'research' } });
    expect(resolveSpendLimit({ ...base, groups: [{ group: 'interns', limit: money(0.2) }] })?.limit).toEqual(
      money(0.2),
    );
  });

  it('ranks group limits of different periods and units by what they allow per day', () => {
    // 6/week (0.86 a day) beats 0.5/day; 10/month (0.33 a day) does not.
    const groups = [
      { group: 'a', limit: money(0.5) },
      { group: 'b', limit: money(6, 'week') },
      { group: 'c', limit: money(10, 'month') },
    ];
    expect(resolveSpendLimit({ ...base, groups })?.source).toEqual({ kind: 'group', group: 'b' });
    // 10M tokens a day at 0.15 per million is 1.50 a day: more than 0.86.
    expect(
      resolveSpendLimit({ ...base, groups: [...groups, { group: 'd', limit: tokens(10_000_000) }] })?.source,
    ).toEqual({ kind: 'group', group: 'd' });
    // Without a price, token limits compare among themselves.
    expect(
      resolveSpendLimit({
        ...base,
        moneyPerToken: null,
        groups: [
          { group: 'x', limit: tokens(1000) },
          { group: 'y', limit: tokens(20_000, 'week') },
        ],
      })?.source,
    ).toEqual({ kind: 'group', group: 'y' });
  });

  it('breaks a tie by group name, whatever the order the groups come in', () => {
    const groups = [
      { group: 'zeta', limit: money(1) },
      { group: 'alpha', limit: money(7, 'week') },
    ];
    expect(resolveSpendLimit({ ...base, groups })?.source).toEqual({ kind: 'group', group: 'alpha' });
    expect(resolveSpendLimit({ ...base, groups: [...groups].reverse() })?.source).toEqual({
      kind: 'group',
      group: 'alpha',
    });
  });

  it('falls back to the default of the user kind, and to no limit at all', () => {
    expect(resolveSpendLimit(base)).toEqual({ limit: money(1), source: { kind: 'default' } });
    expect(resolveSpendLimit({ ...base, userKind: 'guest' })).toEqual({
      limit: money(0.1),
      source: { kind: 'default' },
    });
    expect(resolveSpendLimit({ ...base, defaults: { user: null, guest: money(0.1) } })).toBeNull();
    expect(resolveSpendLimit({ ...base, userKind: 'guest', defaults: { user: money(1), guest: null } })).toBeNull();
  });
});
