import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SpendAccountLimit } from '../../src/core/ports/spend-store';
import type { SpendAmount, SpendLimit, SpendPeriod } from '../../src/core/spend/spend-limit';
import type { MakePortStores, PortStores } from './port-fixtures';
import { newThread, send } from './store-fixtures';

// What both implementations share. Left out, as Postgres-only: concurrent reservations never together passing a limit
// (the accounts' row locks in prisma/functions/spend_reserve.sql; test/spend/spend-limits.int.test.ts races them),
// a guest address row needing its users row (a foreign key), and the calendar (the gate computes `starts` and `day`
// in SPEND_LIMIT_TIMEZONE; the store only compares the days it is given). Amounts are binary fractions, so sums are exact.

/** The first days of each period on Friday 2026-11-27 (weeks start on Monday). */
const STARTS: Record<SpendPeriod, string> = { day: '2026-11-27', week: '2026-11-23', month: '2026-11-01' };
const TODAY = STARTS.day;
const limit = (amount: number, unit: SpendLimit['unit'] = 'money', period: SpendPeriod = 'day'): SpendLimit => ({
  amount,
  unit,
  period,
});
const money = (amount: number): SpendAmount => ({ money: amount, tokens: 0 });
const inAnHour = () => new Date(Date.now() + 3_600_000);
const anHourAgo = () => new Date(Date.now() - 3_600_000);

async function newUser(stores: PortStores, kind: 'guest' | 'external' = 'external'): Promise<string> {
  const userId = `user-${randomUUID()}`;
  await stores.threads.ensureUser(userId, kind);
  return userId;
}

/** A reservation as the gate asks for one: a hold without `turnId`, a turn's with one (`accounts` null: claim only). */
function reserve(
  stores: PortStores,
  input: {
    userId: string;
    amount: SpendAmount;
    accounts?: SpendAccountLimit[] | null;
    turnId?: string | null;
    starts?: Partial<Record<SpendPeriod, string>>;
    expiresAt?: Date;
    id?: string;
  },
) {
  return stores.spend.reserve({
    id: input.id ?? randomUUID(),
    userId: input.userId,
    turnId: input.turnId ?? null,
    accounts: input.accounts === undefined ? null : input.accounts,
    starts: { ...STARTS, ...input.starts },
    amount: input.amount,
    expiresAt: input.expiresAt ?? inAnHour(),
  });
}

const usageOf = (stores: PortStores, account: string, since = TODAY) => stores.spend.usage(account, since);

/** The SpendStore contract (issue 35: limits, reservations against them, spending per day, releases). */
export function describeSpendStoreContract(name: string, make: MakePortStores): void {
  describe(`SpendStore contract: ${name}`, () => {
    it("reads the limits set on the user, on their limited groups and on their service key, and a guest's address", async () => {
      const stores = make();
      expect(await stores.spend.limitsOf(`user-${randomUUID()}`, `key-${randomUUID()}`)).toEqual({
        userKind: null,
        user: null,
        groups: [],
        address: null,
        serviceKey: null,
      });
      const guest = await newUser(stores, 'guest');
      const [limited, unlimited, key] = [`group-${randomUUID()}`, `group-${randomUUID()}`, `key-${randomUUID()}`];
      await stores.spendAdmin.setUserLimit(guest, limit(0.5));
      await stores.spendAdmin.setGroup({ name: limited, limit: limit(1000, 'tokens', 'week'), members: [guest] });
      await stores.spendAdmin.setGroup({ name: unlimited, limit: null, members: [guest] });
      await stores.spendAdmin.setServiceKeyLimit(key, limit(2, 'money', 'month'));
      await stores.spend.rememberGuestAddress(guest, '203.0.113.7');
      // The address a session was first made from stays.
      await stores.spend.rememberGuestAddress(guest, '198.51.100.9');
      expect(await stores.spend.limitsOf(guest, key)).toEqual({
        userKind: 'guest',
        user: limit(0.5),
        groups: [{ group: limited, limit: limit(1000, 'tokens', 'week') }],
        address: '203.0.113.7',
        serviceKey: limit(2, 'money', 'month'),
      });
      expect(await stores.spend.limitsOf(guest)).toMatchObject({ serviceKey: null });
      const external = await newUser(stores);
      expect(await stores.spend.limitsOf(external)).toEqual({
        userKind: 'external',
        user: null,
        groups: [],
        address: null,
        serviceKey: null,
      });
    });

    it("keeps a token's group claims in step with the token, leaving an admin's placements and unknown groups alone", async () => {
      const stores = make();
      const userId = await newUser(stores);
      const [a, b, byAdmin] = [1, 2, 3].map((index) => `group-${index}-${randomUUID()}`) as [string, string, string];
      for (const group of [a, b]) await stores.spendAdmin.setGroup({ name: group, limit: limit(1) });
      await stores.spendAdmin.setGroup({ name: byAdmin, limit: limit(1), members: [userId] });
      const groupsOf = async () => (await stores.spend.limitsOf(userId)).groups.map((entry) => entry.group).sort();

      await stores.spend.syncClaimGroups(userId, [a, b, byAdmin, `group-${randomUUID()}`]);
      expect(await groupsOf()).toEqual([a, b, byAdmin].sort());
      // The token no longer names them: the claim's memberships go, the admin's stays.
      await stores.spend.syncClaimGroups(userId, [b]);
      expect(await groupsOf()).toEqual([b, byAdmin].sort());
      // An admin replacing a group's members leaves the claim's membership in it.
      await stores.spendAdmin.setGroup({ name: b, limit: limit(1), members: [] });
      expect(await groupsOf()).toEqual([b, byAdmin].sort());
      await stores.spend.syncClaimGroups(userId, []);
      expect(await groupsOf()).toEqual([byAdmin]);
    });

    it('refuses a reservation that would pass an allowance, naming the account and its limit, and holds nothing for it', async () => {
      const stores = make();
      const userId = await newUser(stores);
      const own = [{ account: `user:${userId}`, limit: limit(1) }];
      expect(await reserve(stores, { userId, accounts: own, amount: money(0.75) })).toEqual({ outcome: 'ok' });
      expect(await reserve(stores, { userId, accounts: own, amount: money(0.5) })).toEqual({
        outcome: 'refused',
        account: `user:${userId}`,
        limit: limit(1),
      });
      expect(await usageOf(stores, `user:${userId}`)).toEqual({ spent: money(0), reserved: money(0.75) });
      // Up to the limit exactly fits.
      expect(await reserve(stores, { userId, accounts: own, amount: money(0.25) })).toEqual({ outcome: 'ok' });
      expect(await usageOf(stores, `user:${userId}`)).toEqual({ spent: money(0), reserved: money(1) });
    });

    it("checks each account in its limit's unit, and an account without a limit never refuses", async () => {
      const stores = make();
      const userId = await newUser(stores, 'guest');
      const address = `address:${randomUUID()}`;
      const accounts = [
        { account: `user:${userId}`, limit: limit(1) },
        { account: address, limit: limit(1000, 'tokens') },
      ];
      expect(await reserve(stores, { userId, accounts, amount: { money: 0.5, tokens: 800 } })).toEqual({
        outcome: 'ok',
      });
      // Money still fits; the address's tokens do not.
      expect(await reserve(stores, { userId, accounts, amount: { money: 0.25, tokens: 400 } })).toEqual({
        outcome: 'refused',
        account: address,
        limit: limit(1000, 'tokens'),
      });
      expect(await usageOf(stores, address)).toEqual({ spent: money(0), reserved: { money: 0.5, tokens: 800 } });
      const free = [{ account: `user:${await newUser(stores)}`, limit: null }];
      expect(await reserve(stores, { userId, accounts: free, amount: { money: 1e6, tokens: 1e9 } })).toEqual({
        outcome: 'ok',
      });
    });

    it("counts what was spent since the limit's period began, and a new period starts afresh", async () => {
      const stores = make();
      const daily = await newUser(stores);
      await stores.spend.settle({ turnId: null, userId: daily, day: TODAY, amount: money(0.75) });
      const dayAccount = [{ account: `user:${daily}`, limit: limit(1) }];
      expect(await reserve(stores, { userId: daily, accounts: dayAccount, amount: money(0.5) })).toMatchObject({
        outcome: 'refused',
      });
      // The next day: yesterday's spending no longer counts.
      const tomorrow = { day: '2026-11-28' };
      expect(
        await reserve(stores, { userId: daily, accounts: dayAccount, amount: money(0.5), starts: tomorrow }),
      ).toEqual({ outcome: 'ok' });

      const weekly = await newUser(stores);
      await stores.spend.settle({ turnId: null, userId: weekly, day: '2026-11-24', amount: money(0.75) });
      const weekAccount = [{ account: `user:${weekly}`, limit: limit(1, 'money', 'week') }];
      // Tuesday's spending counts on Friday against a weekly limit, not against a daily one.
      expect(await reserve(stores, { userId: weekly, accounts: weekAccount, amount: money(0.5) })).toMatchObject({
        outcome: 'refused',
      });
      expect(
        await reserve(stores, {
          userId: weekly,
          accounts: [{ account: `user:${weekly}`, limit: limit(1) }],
          amount: money(0.5),
        }),
      ).toEqual({ outcome: 'ok' });
      expect(await usageOf(stores, `user:${weekly}`, '2026-11-24')).toMatchObject({ spent: money(0.75) });
      expect(await usageOf(stores, `user:${weekly}`, '2026-11-25')).toMatchObject({ spent: money(0) });
      expect(
        await reserve(stores, {
          userId: weekly,
          accounts: weekAccount,
          amount: money(0.5),
          starts: { week: '2026-11-30' },
        }),
      ).toEqual({ outcome: 'ok' });
    });

    it("settling replaces a turn's reservation with the call's actual cost, on every account it held on", async () => {
      const stores = make();
      const userId = await newUser(stores, 'guest');
      const address = `address:${randomUUID()}`;
      const accounts = [
        { account: `user:${userId}`, limit: limit(1) },
        { account: address, limit: limit(2) },
      ];
      // The send's hold, then the turn's first call claims it and reserves its own worst case.
      expect(await reserve(stores, { userId, accounts, amount: money(0.5) })).toEqual({ outcome: 'ok' });
      const turnId = randomUUID();
      expect(await reserve(stores, { userId, turnId, amount: money(0.75) })).toEqual({ outcome: 'ok' });
      for (const account of [`user:${userId}`, address])
        expect(await usageOf(stores, account)).toEqual({ spent: money(0), reserved: money(0.75) });

      await stores.spend.settle({ turnId, userId, day: TODAY, amount: { money: 0.25, tokens: 300 } });
      for (const account of [`user:${userId}`, address])
        expect(await usageOf(stores, account)).toEqual({ spent: { money: 0.25, tokens: 300 }, reserved: money(0) });
      // The turn's next call reserves again on the same accounts, counting what the first spent.
      expect(await reserve(stores, { userId, turnId, amount: money(0.75) })).toEqual({ outcome: 'ok' });
      expect(await reserve(stores, { userId, turnId, amount: money(1) })).toMatchObject({
        outcome: 'refused',
        account: `user:${userId}`,
      });
      expect(await usageOf(stores, address)).toEqual({ spent: { money: 0.25, tokens: 300 }, reserved: money(0.75) });
      expect(await stores.spend.release({ turnId })).toBe(1);
      expect(await usageOf(stores, `user:${userId}`)).toEqual({
        spent: { money: 0.25, tokens: 300 },
        reserved: money(0),
      });
    });

    it("grows a turn's reservation by the difference only, and shrinking always fits", async () => {
      const stores = make();
      const userId = await newUser(stores);
      const own = [{ account: `user:${userId}`, limit: limit(1) }];
      const turnId = randomUUID();
      expect(await reserve(stores, { userId, turnId, accounts: own, amount: money(0.5) })).toEqual({ outcome: 'ok' });
      // Another thread's call spends meanwhile: the user is now over the limit.
      await stores.spend.settle({ turnId: null, userId, day: TODAY, amount: money(0.75) });
      expect(await reserve(stores, { userId, turnId, amount: money(0.25) })).toEqual({ outcome: 'ok' });
      expect(await usageOf(stores, `user:${userId}`)).toEqual({ spent: money(0.75), reserved: money(0.25) });
      expect(await reserve(stores, { userId, turnId, amount: money(0.5) })).toEqual({
        outcome: 'refused',
        account: `user:${userId}`,
        limit: limit(1),
      });
      expect(await usageOf(stores, `user:${userId}`)).toEqual({ spent: money(0.75), reserved: money(0.25) });
    });

    it("answers missing for a turn with no reservation and no live hold of its user's to claim", async () => {
      const stores = make();
      const userId = await newUser(stores);
      expect(await reserve(stores, { userId, turnId: randomUUID(), amount: money(0.25) })).toEqual({
        outcome: 'missing',
      });
      const own = [{ account: `user:${userId}`, limit: limit(1) }];
      // An expired hold, and another user's live one, are not the turn's to claim.
      await reserve(stores, { userId, accounts: own, amount: money(0.25), expiresAt: anHourAgo() });
      const other = await newUser(stores);
      await reserve(stores, {
        userId: other,
        accounts: [{ account: `user:${other}`, limit: null }],
        amount: money(0.25),
      });
      expect(await reserve(stores, { userId, turnId: randomUUID(), amount: money(0.25) })).toEqual({
        outcome: 'missing',
      });
      // With accounts, a turn without a hold makes its own reservation.
      const turnId = randomUUID();
      expect(await reserve(stores, { userId, turnId, accounts: own, amount: money(0.5) })).toEqual({ outcome: 'ok' });
      expect(await reserve(stores, { userId, turnId, amount: money(0.5) })).toEqual({ outcome: 'ok' });
    });

    it("settles a call without a reservation on the user's account alone, or on the thread owner's; nothing without either", async () => {
      const stores = make();
      const userId = await newUser(stores);
      await stores.spend.settle({ turnId: randomUUID(), userId, day: TODAY, amount: { money: 0.25, tokens: 10 } });
      await stores.spend.settle({ turnId: null, userId, day: '2026-11-26', amount: { money: 0.5, tokens: 20 } });
      expect(await usageOf(stores, `user:${userId}`, '2026-11-26')).toEqual({
        spent: { money: 0.75, tokens: 30 },
        reserved: money(0),
      });
      const thread = await newThread(stores);
      await stores.spend.settle({ turnId: null, userId: null, threadId: thread.id, day: TODAY, amount: money(0.5) });
      expect(await usageOf(stores, `user:${thread.ownerId}`)).toMatchObject({ spent: money(0.5) });
      await stores.spend.settle({ turnId: null, userId: null, threadId: randomUUID(), day: TODAY, amount: money(1) });
      await stores.spend.settle({ turnId: null, userId: null, day: TODAY, amount: money(1) });
      expect(await usageOf(stores, `user:${randomUUID()}`)).toEqual({ spent: money(0), reserved: money(0) });
    });

    it("releases a hold by id, a turn's reservation at its end, and expired or orphaned ones when sweeping", async () => {
      const stores = make();
      const userId = await newUser(stores);
      const account = `user:${userId}`;
      const own = [{ account, limit: limit(10) }];
      const hold = randomUUID();
      await reserve(stores, { id: hold, userId, accounts: own, amount: money(0.25) });
      expect(await stores.spend.release({ id: hold })).toBe(1);
      expect(await stores.spend.release({ id: hold })).toBe(0);
      expect(await usageOf(stores, account)).toEqual({ spent: money(0), reserved: money(0) });

      // A hold a turn claimed is the turn's: releasing the send's hold leaves it.
      const claimed = randomUUID();
      const turnId = randomUUID();
      await reserve(stores, { id: claimed, userId, accounts: own, amount: money(0.25) });
      await reserve(stores, { userId, turnId, amount: money(0.5) });
      expect(await stores.spend.release({ id: claimed })).toBe(0);
      expect(await usageOf(stores, account)).toMatchObject({ reserved: money(0.5) });
      expect(await stores.spend.release({ turnId })).toBe(1);

      // The sweep: an expired hold and an ended (here: unknown) turn's reservation go; a live hold and a running
      // turn's reservation stay.
      const thread = await newThread(stores, { ownerId: userId });
      await send(stores, thread.id, 'hello');
      const started = await stores.turns.nextTurn({
        threadId: thread.id,
        owner: `process-${randomUUID()}`,
        ttlMs: 30_000,
      });
      if (started.outcome !== 'started') throw new Error('no turn started');
      await reserve(stores, { userId, accounts: own, amount: money(1), expiresAt: anHourAgo() });
      await reserve(stores, { userId, accounts: own, amount: money(2), turnId: randomUUID() });
      await reserve(stores, { userId, accounts: own, amount: money(0.5), turnId: started.turn.id });
      const live = randomUUID();
      await reserve(stores, { id: live, userId, accounts: own, amount: money(0.25) });
      expect(await usageOf(stores, account)).toMatchObject({ reserved: money(3.75) });
      expect(await stores.spend.release({ stale: 1000 })).toBeGreaterThanOrEqual(2);
      expect(await usageOf(stores, account)).toMatchObject({ reserved: money(0.75) });
      expect(await stores.spend.release({ id: live, turnId: started.turn.id })).toBe(2);
      expect(await usageOf(stores, account)).toMatchObject({ reserved: money(0) });
    });
  });
}

/** The SpendLimitAdminStore contract (the admin's limits on users, service keys and groups). */
export function describeSpendLimitAdminStoreContract(name: string, make: MakePortStores): void {
  describe(`SpendLimitAdminStore contract: ${name}`, () => {
    it('lists the limits set on users, service keys and groups, with their members in order, and replaces them', async () => {
      const stores = make();
      const [user, key, group] = [`user-${randomUUID()}`, `key-${randomUUID()}`, `group-${randomUUID()}`];
      const members = [`user-b-${randomUUID()}`, `user-a-${randomUUID()}`];
      const before = Date.now() - 1000;
      await stores.spendAdmin.setUserLimit(user, limit(0.5));
      await stores.spendAdmin.setUserLimit(user, limit(200_000, 'tokens', 'month'));
      await stores.spendAdmin.setServiceKeyLimit(key, limit(5, 'money', 'week'));
      await stores.spendAdmin.setGroup({ name: group, limit: limit(1), members: [...members, members[0]!] });
      const listed = await stores.spendAdmin.list();
      const users = listed.users.filter((entry) => entry.userId === user);
      expect(users).toEqual([{ userId: user, limit: limit(200_000, 'tokens', 'month'), updatedAt: expect.any(Date) }]);
      expect(users[0]!.updatedAt.getTime()).toBeGreaterThanOrEqual(before);
      expect(listed.serviceKeys.filter((entry) => entry.keyId === key)).toEqual([
        { keyId: key, limit: limit(5, 'money', 'week'), updatedAt: expect.any(Date) },
      ]);
      expect(listed.groups.filter((entry) => entry.name === group)).toEqual([
        { name: group, limit: limit(1), members: [...members].sort(), updatedAt: expect.any(Date) },
      ]);

      // A group without a limit stays listed, with no limit; its members replaced when given, kept when not.
      await stores.spendAdmin.setGroup({ name: group, limit: null, members: [members[1]!] });
      await stores.spendAdmin.setGroup({ name: group, limit: null });
      const again = (await stores.spendAdmin.list()).groups.filter((entry) => entry.name === group);
      expect(again).toEqual([{ name: group, limit: null, members: [members[1]], updatedAt: null }]);
    });

    it('deletes a limit or a group, saying whether there was one', async () => {
      const stores = make();
      const [user, key, group] = [`user-${randomUUID()}`, `key-${randomUUID()}`, `group-${randomUUID()}`];
      await stores.spendAdmin.setUserLimit(user, limit(1));
      await stores.spendAdmin.setServiceKeyLimit(key, limit(1));
      await stores.spendAdmin.setGroup({ name: group, limit: limit(1), members: [user] });
      expect(await stores.spendAdmin.deleteUserLimit(user)).toBe(true);
      expect(await stores.spendAdmin.deleteUserLimit(user)).toBe(false);
      expect(await stores.spendAdmin.deleteServiceKeyLimit(key)).toBe(true);
      expect(await stores.spendAdmin.deleteServiceKeyLimit(key)).toBe(false);
      expect(await stores.spendAdmin.deleteGroup(group)).toBe(true);
      expect(await stores.spendAdmin.deleteGroup(group)).toBe(false);
      const listed = await stores.spendAdmin.list();
      expect(listed.users.some((entry) => entry.userId === user)).toBe(false);
      expect(listed.serviceKeys.some((entry) => entry.keyId === key)).toBe(false);
      expect(listed.groups.some((entry) => entry.name === group)).toBe(false);
      expect(await stores.spend.limitsOf(user, key)).toMatchObject({ user: null, groups: [], serviceKey: null });
    });
  });
}
