import { describe, expect, it } from 'vitest';
import { describeSpendLimit, formatSpendLimit, parseSpendLimit } from './spend-limit';

describe('parseSpendLimit', () => {
  it('reads money and token limits per day, week and month', () => {
    expect(parseSpendLimit('0.50/day')).toEqual({ ok: true, limit: { amount: 0.5, unit: 'money', period: 'day' } });
    expect(parseSpendLimit(' 200000tokens/month ')).toEqual({
      ok: true,
      limit: { amount: 200_000, unit: 'tokens', period: 'month' },
    });
    expect(parseSpendLimit('3 tokens / WEEK')).toEqual({
      ok: true,
      limit: { amount: 3, unit: 'tokens', period: 'week' },
    });
    expect(parseSpendLimit('0/day')).toEqual({ ok: true, limit: { amount: 0, unit: 'money', period: 'day' } });
  });

  it.each(['', '1', '1/year', '-1/day', 'abc/day', '1.5tokens/day', '1e3/day', '1/day/day', '$1/day', '1e16/day'])(
    'refuses "%s" with the expected form in the message',
    (text) => {
      const result = parseSpendLimit(text === '1e16/day' ? '10000000000000000/day' : text);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error).toMatch(/AMOUNT\/PERIOD|whole number/);
    },
  );

  it('writes a limit back in the form it is read in, and in words', () => {
    for (const text of ['0.5/day', '200000tokens/month', '12/week']) {
      const parsed = parseSpendLimit(text);
      expect(parsed.ok && formatSpendLimit(parsed.limit)).toBe(text);
    }
    expect(describeSpendLimit({ amount: 0.5, unit: 'money', period: 'day' })).toBe('0.50 per day');
    expect(describeSpendLimit({ amount: 200_000, unit: 'tokens', period: 'month' })).toBe('200,000 tokens per month');
  });
});
