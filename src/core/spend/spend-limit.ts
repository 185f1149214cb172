/** What a spend limit counts: money in the MODEL_PRICES currency, or tokens. */
export type SpendUnit = 'money' | 'tokens';

/** The calendar period a spend limit renews over, in SPEND_LIMIT_TIMEZONE (a week starts on Monday). */
export type SpendPeriod = 'day' | 'week' | 'month';

/** An amount per period: `0.50/day` (money), `200000tokens/month` (tokens). */
export interface SpendLimit {
  amount: number;
  unit: SpendUnit;
  period: SpendPeriod;
}

/** Money or tokens together: a spending, a reservation, a worst case. */
export interface SpendAmount {
  money: number;
  tokens: number;
}

export const SPEND_PERIODS: readonly SpendPeriod[] = ['day', 'week', 'month'];

const LIMIT = /^(\d+(?:\.\d+)?)\s*(tokens)?\s*\/\s*(day|week|month)$/i;

/** The largest amount a limit may name (money or tokens): past it a typo, not a limit. */
const MAX_AMOUNT = 1e15;

/**
 * Parses `AMOUNT/PERIOD` (`0.50/day`, `200000tokens/month`); an error message naming the expected form otherwise.
 * Zero is a limit (nothing may be spent).
 */
export function parseSpendLimit(text: string): { ok: true; limit: SpendLimit } | { ok: false; error: string } {
  const match = LIMIT.exec(text.trim());
  const amount = match ? Number(match[1]) : Number.NaN;
  if (!match || !Number.isFinite(amount) || amount > MAX_AMOUNT) {
    return {
      ok: false,
      error: `expected AMOUNT/PERIOD such as 0.50/day (money) or 200000tokens/month (tokens), period day, week or month; got "${text}"`,
    };
  }
  const unit: SpendUnit = match[2] ? 'tokens' : 'money';
  if (unit === 'tokens' && !Number.isInteger(amount)) {
    return { ok: false, error: `a token limit is a whole number of tokens; got "${text}"` };
  }
  return { ok: true, limit: { amount, unit, period: match[3]!.toLowerCase() as SpendPeriod } };
}

/** A limit as it is written in settings: `0.5/day`, `200000tokens/month`. */
export function formatSpendLimit(limit: SpendLimit): string {
  return `${limit.amount}${limit.unit === 'tokens' ? 'tokens' : ''}/${limit.period}`;
}

/** A limit as a person reads it: `0.50 per day`, `200,000 tokens per month`. */
export function describeSpendLimit(limit: SpendLimit): string {
  const amount =
    limit.unit === 'tokens' ? `${Math.round(limit.amount).toLocaleString('en-US')} tokens` : limit.amount.toFixed(2);
  return `${amount} per ${limit.period}`;
}

/** The amount of a spending in a limit's unit. */
export function amountIn(unit: SpendUnit, amount: SpendAmount): number {
  return unit === 'money' ? amount.money : amount.tokens;
}
