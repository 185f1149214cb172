import type {
  ReserveOutcome,
  SpendLimitAdminStore,
  SpendStore,
  StoredSpendLimits,
} from '../../src/core/ports/spend-store';
import type { SpendAmount, SpendLimit, SpendPeriod } from '../../src/core/spend/spend-limit';
import { copy, type MemoryDatabase, type SpendReservationRow, type SpendTables } from './memory-database';

/** What rounding leaves of a fully released reservation is 0, and it never goes below 0 (spend_nonnegative). */
const nonnegative = (amount: number) => (amount < 1e-9 ? 0 : amount);

const USER = 'user:';

/** Adds `money`/`tokens` (negative: subtracts) to what the accounts' reservations hold. */
function addReserved(spend: SpendTables, accounts: readonly string[], change: SpendAmount): void {
  for (const account of new Set(accounts)) {
    const held = spend.reserved.get(account) ?? { money: 0, tokens: 0 };
    spend.reserved.set(account, {
      money: nonnegative(held.money + change.money),
      tokens: nonnegative(held.tokens + change.tokens),
    });
  }
}

/** An account's spending on the days from `since` on (days are `YYYY-MM-DD`, so they compare as strings). */
function spentSince(spend: SpendTables, account: string, since: string): SpendAmount {
  const total = { money: 0, tokens: 0 };
  for (const [key, amount] of spend.days) {
    const [dayAccount, day] = [key.slice(0, key.lastIndexOf(' ')), key.slice(key.lastIndexOf(' ') + 1)];
    if (dayAccount !== account || day < since) continue;
    total.money += amount.money;
    total.tokens += amount.tokens;
  }
  return total;
}

/** The turn's reservation, else one of the user's unexpired holds, claimed for the turn (spend_reserve's first step). */
function reservationOf(database: MemoryDatabase, userId: string, turnId: string): SpendReservationRow | undefined {
  const { reservations } = database.spend;
  const own = reservations.find((row) => row.turnId === turnId);
  if (own) return own;
  const hold = reservations
    .filter((row) => row.userId === userId && row.turnId === null && row.expiresAt.getTime() > Date.now())
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1))[0];
  if (hold) hold.turnId = turnId;
  return hold;
}

/** The first account whose limit `amount` would pass, growing `row` (shrinking always fits). */
function refusal(
  spend: SpendTables,
  row: SpendReservationRow,
  starts: Record<SpendPeriod, string>,
  amount: SpendAmount,
): ReserveOutcome | null {
  for (const { account, limit } of row.accounts) {
    const unit = limit?.unit ?? 'money';
    const delta = amount[unit] - row[unit];
    if (delta <= 0) continue;
    const used =
      (spend.reserved.get(account)?.[unit] ?? 0) + spentSince(spend, account, starts[limit?.period ?? 'day'])[unit];
    if (limit && used + delta > limit.amount) return { outcome: 'refused', account, limit: copy(limit) };
  }
  return null;
}

/**
 * SpendStore in memory (test/contracts/spend-store.contract.ts holds it to the Postgres repository's behaviour): the
 * limits an admin set, group claims, reservations and daily spending, as prisma/functions/spend_*.sql keep them. One
 * caller at a time, so it needs none of the row locks that keep concurrent Postgres reservations within a limit.
 */
export function createMemorySpendStore(database: MemoryDatabase): SpendStore {
  const spend = database.spend;
  return {
    async limitsOf(userId, serviceKey = null) {
      const kind = database.users.get(userId);
      const limits: StoredSpendLimits = {
        userKind: kind ?? null,
        user: copy(spend.userLimits.get(userId)?.limit ?? null),
        groups: [...spend.groups.entries()].flatMap(([group, row]) =>
          row.limit && row.members.has(userId) ? [{ group, limit: copy(row.limit.limit) }] : [],
        ),
        address: spend.guestAddresses.get(userId) ?? null,
        serviceKey: serviceKey === null ? null : copy(spend.serviceKeyLimits.get(serviceKey)?.limit ?? null),
      };
      return limits;
    },

    async syncClaimGroups(userId, groups) {
      for (const [name, group] of spend.groups) {
        if (groups.includes(name)) {
          if (!group.members.has(userId)) group.members.set(userId, true);
        } else if (group.members.get(userId) === true) group.members.delete(userId);
      }
    },

    async rememberGuestAddress(userId, address) {
      if (!database.users.has(userId)) throw new Error(`foreign key: no user ${userId}`);
      if (!spend.guestAddresses.has(userId)) spend.guestAddresses.set(userId, address);
    },

    async reserve({ id, userId, turnId, accounts, starts, amount, expiresAt }) {
      let row = turnId === null ? undefined : reservationOf(database, userId, turnId);
      const fresh = !row;
      if (!row) {
        if (accounts === null) return { outcome: 'missing' };
        row = { id, userId, turnId, accounts: copy(accounts), money: 0, tokens: 0, expiresAt, createdAt: new Date() };
      }
      const refused = refusal(spend, row, starts, amount);
      if (refused) return refused;
      const accountNames = row.accounts.map((entry) => entry.account);
      addReserved(spend, accountNames, { money: amount.money - row.money, tokens: amount.tokens - row.tokens });
      Object.assign(row, { money: amount.money, tokens: amount.tokens, expiresAt });
      if (fresh) spend.reservations.push(row);
      return { outcome: 'ok' };
    },

    async settle({ turnId, userId, threadId, day, amount }) {
      const owner = userId ?? (threadId ? database.threads.get(threadId)?.ownerId : undefined);
      if (!owner) return;
      const row = turnId === null ? undefined : spend.reservations.find((entry) => entry.turnId === turnId);
      const accounts = row ? row.accounts.map((entry) => entry.account) : [USER + owner];
      if (row) {
        addReserved(spend, accounts, { money: -row.money, tokens: -row.tokens });
        Object.assign(row, { money: 0, tokens: 0 });
      }
      for (const account of new Set(accounts)) {
        const key = `${account} ${day}`;
        const spent = spend.days.get(key) ?? { money: 0, tokens: 0 };
        spend.days.set(key, { money: spent.money + amount.money, tokens: spent.tokens + amount.tokens });
      }
    },

    async release({ id, turnId, stale = 0 }) {
      const live = new Set(
        database.turns.filter((turn) => turn.status === 'queued' || turn.status === 'running').map((turn) => turn.id),
      );
      const now = Date.now();
      const named = spend.reservations.filter(
        (row) => (row.id === id && row.turnId === null) || (turnId !== undefined && row.turnId === turnId),
      );
      const staleRows = spend.reservations
        .filter((row) => row.expiresAt.getTime() < now || (row.turnId !== null && !live.has(row.turnId)))
        .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
        .slice(0, Math.max(stale, 0));
      const gone = new Set([...named, ...staleRows]);
      for (const row of gone)
        addReserved(
          spend,
          row.accounts.map((entry) => entry.account),
          { money: -row.money, tokens: -row.tokens },
        );
      spend.reservations = spend.reservations.filter((row) => !gone.has(row));
      return gone.size;
    },

    async usage(account, since) {
      const reserved = spend.reserved.get(account) ?? { money: 0, tokens: 0 };
      return { spent: spentSince(spend, account, since), reserved: { ...reserved } };
    },
  };
}

const entry = (limit: SpendLimit) => ({ limit: copy(limit), updatedAt: new Date() });
const byKey = <T>(rows: Map<string, T>) => [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** SpendLimitAdminStore in memory, over the same tables as createMemorySpendStore. */
export function createMemorySpendLimitAdminStore(database: MemoryDatabase): SpendLimitAdminStore {
  const spend = database.spend;
  return {
    async list() {
      return {
        users: byKey(spend.userLimits).map(([userId, row]) => ({ userId, ...copy(row) })),
        serviceKeys: byKey(spend.serviceKeyLimits).map(([keyId, row]) => ({ keyId, ...copy(row) })),
        groups: byKey(spend.groups).map(([name, group]) => ({
          name,
          limit: copy(group.limit?.limit ?? null),
          members: [...group.members.keys()].sort(),
          updatedAt: group.limit?.updatedAt ?? null,
        })),
      };
    },
    async setUserLimit(userId, limit) {
      spend.userLimits.set(userId, entry(limit));
    },
    async deleteUserLimit(userId) {
      return spend.userLimits.delete(userId);
    },
    async setServiceKeyLimit(keyId, limit) {
      spend.serviceKeyLimits.set(keyId, entry(limit));
    },
    async deleteServiceKeyLimit(keyId) {
      return spend.serviceKeyLimits.delete(keyId);
    },
    async setGroup({ name, limit, members }) {
      const group = spend.groups.get(name) ?? { limit: null, members: new Map<string, boolean>() };
      group.limit = limit ? entry(limit) : null;
      if (members) {
        // The members a token's group claim placed follow the token, not the admin's list.
        for (const [userId, viaClaim] of group.members) if (!viaClaim) group.members.delete(userId);
        for (const userId of members) if (!group.members.has(userId)) group.members.set(userId, false);
      }
      spend.groups.set(name, group);
    },
    async deleteGroup(name) {
      return spend.groups.delete(name);
    },
  };
}
