import type { SpendLimit } from './spend-limit';

/** Whether a user signed in elsewhere (external) or is a guest: each kind has its own default limit. */
export type SpendUserKind = 'guest' | 'external';

/** Where a user's effective limit comes from. */
export type SpendLimitSource = { kind: 'user' } | { kind: 'group'; group: string } | { kind: 'default' };

/** The limits that may apply to one user (an admin's, their groups', the deployment defaults). */
export interface SpendLimitCandidates {
  userKind: SpendUserKind;
  /** The limit an admin set on the user; it wins whatever the others say. */
  user: SpendLimit | null;
  /** The limits of the groups the user is a member of. */
  groups: readonly { group: string; limit: SpendLimit }[];
  /** SPEND_LIMIT_USER (signed-in users) and SPEND_LIMIT_GUEST (guests); null: unlimited. */
  defaults: { user: SpendLimit | null; guest: SpendLimit | null };
  /**
   * Money per token (the chat model's input price), to compare a token limit with a money limit; null when no price
   * is known (then money limits cannot be set, and token limits compare among themselves).
   */
  moneyPerToken: number | null;
}

const DAYS = { day: 1, week: 7, month: 30 } as const;

/**
 * What a limit allows per day, for ranking limits of different periods and units: money per day, tokens per day at
 * `moneyPerToken` when known. Without a price a token limit ranks below any money limit (which cannot then exist).
 */
export function dailyAllowance(limit: SpendLimit, moneyPerToken: number | null): number {
  const perDay = limit.amount / DAYS[limit.period];
  if (limit.unit === 'money') return moneyPerToken === null ? Number.MAX_VALUE / 2 + perDay : perDay;
  return moneyPerToken === null ? perDay / 1e15 : perDay * moneyPerToken;
}

/**
 * A user's effective spend limit: the user's own, else the largest of their groups' (by daily allowance, see
 * dailyAllowance; ties go to the group named first alphabetically), else the default of their kind; null when none
 * applies (unlimited).
 */
export function resolveSpendLimit(
  candidates: SpendLimitCandidates,
): { limit: SpendLimit; source: SpendLimitSource } | null {
  if (candidates.user) return { limit: candidates.user, source: { kind: 'user' } };
  let best: { group: string; limit: SpendLimit; allowance: number } | null = null;
  for (const { group, limit } of candidates.groups) {
    const allowance = dailyAllowance(limit, candidates.moneyPerToken);
    if (!best || allowance > best.allowance || (allowance === best.allowance && group < best.group))
      best = { group, limit, allowance };
  }
  if (best) return { limit: best.limit, source: { kind: 'group', group: best.group } };
  const fallback = candidates.userKind === 'guest' ? candidates.defaults.guest : candidates.defaults.user;
  return fallback ? { limit: fallback, source: { kind: 'default' } } : null;
}
