import type { SpendAmount, SpendLimit, SpendPeriod } from '../spend/spend-limit';
import type { SpendUserKind } from '../spend/resolve-spend-limit';

/** The limits stored for one user: their own, their groups', and their kind (null: no users row yet). */
export interface StoredSpendLimits {
  userKind: SpendUserKind | null;
  user: SpendLimit | null;
  groups: { group: string; limit: SpendLimit }[];
  /** A guest's client address key (the one their session was made from); null for others or when unknown. */
  address: string | null;
  /** The limit of the service key the user acts through (all its end users together); null: none, or no key. */
  serviceKey: SpendLimit | null;
}

/** A spending account (`user:<id>`, `address:<key>`, `service-key:<keyId>`) with the limit a reservation checks it against (null: none). */
export interface SpendAccountLimit {
  account: string;
  limit: SpendLimit | null;
}

export type ReserveOutcome =
  | { outcome: 'ok' }
  /** A turn with no reservation and no hold to claim, and no accounts given to make one. */
  | { outcome: 'missing' }
  | { outcome: 'refused'; account: string; limit: SpendLimit };

/**
 * Spending and reservations per account (issue 35), in Postgres: every change is one statement that takes the
 * accounts' row locks, so concurrent reservations never together pass a limit.
 */
export interface SpendStore {
  /** `serviceKey`: the id of the service key the user acts through (serviceKeyOf), null for others. */
  limitsOf(userId: string, serviceKey?: string | null): Promise<StoredSpendLimits>;
  /**
   * Makes the user's token-placed group memberships (SPEND_LIMIT_GROUP_CLAIM) exactly `groups`, those of them that
   * exist; memberships an admin set are left alone.
   */
  syncClaimGroups(userId: string, groups: readonly string[]): Promise<void>;
  /** Records the client address a guest session was made from (SPEND_LIMIT_GUESTS_PER_ADDRESS). */
  rememberGuestAddress(userId: string, address: string): Promise<void>;
  /**
   * Sets a reservation to `amount` if it fits (see prisma/functions/spend_reserve.sql): a turn's (claiming one of the
   * user's holds when it has none), or, without `turnId`, a new hold `id` on `accounts`. `starts`: the first day of
   * each period kind now.
   */
  reserve(input: {
    id: string;
    userId: string;
    turnId: string | null;
    accounts: SpendAccountLimit[] | null;
    starts: Record<SpendPeriod, string>;
    amount: SpendAmount;
    expiresAt: Date;
  }): Promise<ReserveOutcome>;
  /**
   * Counts one call's spending on `day`, releasing what the turn's reservation held for it; on `userId`, else the
   * owner of `threadId` (nothing when neither is known).
   */
  settle(input: {
    turnId: string | null;
    userId: string | null;
    threadId?: string | null;
    day: string;
    amount: SpendAmount;
  }): Promise<void>;
  /** Releases the hold `id`, the turn's reservation, and up to `stale` expired or orphaned ones; how many went. */
  release(input: { id?: string; turnId?: string; stale?: number }): Promise<number>;
  /** An account's spending since `since` (a day) and what its reservations hold now. */
  usage(account: string, since: string): Promise<{ spent: SpendAmount; reserved: SpendAmount }>;
}

/** One limit an admin set, as the admin routes list it. */
export interface SpendLimitEntry {
  limit: SpendLimit;
  updatedAt: Date;
}

/** The admin's side of spend limits: limits on users, groups and service keys, and groups' members. */
export interface SpendLimitAdminStore {
  list(): Promise<{
    users: (SpendLimitEntry & { userId: string })[];
    serviceKeys: (SpendLimitEntry & { keyId: string })[];
    groups: { name: string; limit: SpendLimit | null; members: string[]; updatedAt: Date | null }[];
  }>;
  setUserLimit(userId: string, limit: SpendLimit): Promise<void>;
  /** Whether there was one. */
  deleteUserLimit(userId: string): Promise<boolean>;
  setServiceKeyLimit(keyId: string, limit: SpendLimit): Promise<void>;
  /** Whether there was one. */
  deleteServiceKeyLimit(keyId: string): Promise<boolean>;
  /** Creates or replaces the group: its limit and, when given, its members. */
  setGroup(input: { name: string; limit: SpendLimit | null; members?: string[] }): Promise<void>;
  /** Whether there was one. */
  deleteGroup(name: string): Promise<boolean>;
}
