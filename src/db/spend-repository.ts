import { randomUUID } from 'node:crypto';
import type { ReserveOutcome, SpendLimitAdminStore, SpendStore, StoredSpendLimits } from '../core/ports/spend-store';
import type { SpendLimit } from '../core/spend/spend-limit';
import { Prisma } from './generated/client';
import type { Database } from './prisma-client';

interface LimitJson {
  amount: number;
  unit: string;
  period: string;
}

const toLimit = (row: LimitJson): SpendLimit => ({
  amount: Number(row.amount),
  unit: row.unit === 'tokens' ? 'tokens' : 'money',
  period: row.period === 'week' || row.period === 'month' ? row.period : 'day',
});

// eslint-disable-next-line max-lines-per-function -- a factory of small methods, one per SpendStore operation
export function createSpendRepository(db: Database): SpendStore {
  return {
    async limitsOf(userId, serviceKey = null) {
      const [row] = await db.sql.rows<{
        kind: string | null;
        address: string | null;
        own: LimitJson | null;
        service_key: LimitJson | null;
        groups: (LimitJson & { name: string })[] | null;
      }>(Prisma.sql`
        SELECT (SELECT kind FROM users WHERE id = ${userId}) AS kind,
          (SELECT address FROM spend_guest_addresses WHERE user_id = ${userId}) AS address,
          (SELECT json_build_object('amount', amount, 'unit', unit, 'period', period) FROM spend_limits
            WHERE user_id = ${userId}) AS own,
          (SELECT json_build_object('amount', amount, 'unit', unit, 'period', period) FROM spend_limits
            WHERE service_key = ${serviceKey}::text) AS service_key,
          (SELECT json_agg(json_build_object('name', g.name, 'amount', l.amount, 'unit', l.unit, 'period', l.period))
            FROM spend_group_members m JOIN spend_groups g ON g.id = m.group_id JOIN spend_limits l ON l.group_id = g.id
            WHERE m.user_id = ${userId}) AS groups`);
      const limits: StoredSpendLimits = {
        userKind: row?.kind === 'guest' || row?.kind === 'external' ? row.kind : null,
        user: row?.own ? toLimit(row.own) : null,
        groups: (row?.groups ?? []).map((group) => ({ group: group.name, limit: toLimit(group) })),
        address: row?.address ?? null,
        serviceKey: row?.service_key ? toLimit(row.service_key) : null,
      };
      return limits;
    },

    async syncClaimGroups(userId, groups) {
      // One statement: the claim's memberships become exactly the named groups that exist (an admin's stay).
      await db.sql.run(Prisma.sql`
        WITH wanted AS (SELECT id FROM spend_groups WHERE name = ANY(${[...groups]}::text[])),
          gone AS (
            DELETE FROM spend_group_members
            WHERE user_id = ${userId} AND via_claim AND group_id NOT IN (SELECT id FROM wanted))
        INSERT INTO spend_group_members (group_id, user_id, via_claim)
        SELECT id, ${userId}, true FROM wanted
        ON CONFLICT (group_id, user_id) DO NOTHING`);
    },

    async rememberGuestAddress(userId, address) {
      await db.sql.run(Prisma.sql`
        INSERT INTO spend_guest_addresses (user_id, address) VALUES (${userId}, ${address})
        ON CONFLICT (user_id) DO NOTHING`);
    },

    async reserve({ id, userId, turnId, accounts, starts, amount, expiresAt }) {
      const list = accounts ?? [];
      const [row] = await db.sql.rows<{ outcome: Record<string, unknown> }>(Prisma.sql`
        SELECT spend_reserve(${id}::uuid, ${userId}::text, ${turnId}::uuid,
          ${accounts ? list.map((entry) => entry.account) : null}::text[],
          ${list.map((entry) => entry.limit?.amount ?? 'Infinity')}::float8[],
          ${list.map((entry) => entry.limit?.unit ?? 'money')}::text[],
          ${list.map((entry) => entry.limit?.period ?? 'day')}::text[],
          ${[starts.day, starts.week, starts.month]}::date[], ${amount.money}::float8, ${amount.tokens}::float8,
          ${expiresAt}::timestamptz) AS outcome`);
      const outcome = row?.outcome ?? {};
      if (outcome.missing) return { outcome: 'missing' } satisfies ReserveOutcome;
      const refused = outcome.refused as (LimitJson & { account: string }) | undefined;
      if (refused) return { outcome: 'refused', account: refused.account, limit: toLimit(refused) };
      return { outcome: 'ok' };
    },

    async settle({ turnId, userId, threadId, day, amount }) {
      await db.sql.rows(Prisma.sql`
        SELECT spend_settle(${turnId}::uuid,
          coalesce(${userId}::text, (SELECT owner_id FROM threads WHERE id = ${threadId ?? null}::uuid)),
          ${day}::date, ${amount.money}::float8, ${amount.tokens}::float8)`);
    },

    async release({ id, turnId, stale }) {
      const [row] = await db.sql.rows<{ released: number }>(Prisma.sql`
        SELECT spend_release(${id ?? null}::uuid, ${turnId ?? null}::uuid, ${stale ?? 0}::int) AS released`);
      return row?.released ?? 0;
    },

    async usage(account, since) {
      const [row] = await db.sql.rows<{
        spent_money: number;
        spent_tokens: number;
        reserved_money: number;
        reserved_tokens: number;
      }>(Prisma.sql`
        SELECT coalesce((SELECT sum(spent_money) FROM spend_days WHERE account = ${account} AND day >= ${since}::date), 0)::float8 AS spent_money,
          coalesce((SELECT sum(spent_tokens) FROM spend_days WHERE account = ${account} AND day >= ${since}::date), 0)::float8 AS spent_tokens,
          coalesce((SELECT reserved_money FROM spend_accounts WHERE account = ${account}), 0)::float8 AS reserved_money,
          coalesce((SELECT reserved_tokens FROM spend_accounts WHERE account = ${account}), 0)::float8 AS reserved_tokens`);
      return {
        spent: { money: Number(row?.spent_money ?? 0), tokens: Number(row?.spent_tokens ?? 0) },
        reserved: { money: Number(row?.reserved_money ?? 0), tokens: Number(row?.reserved_tokens ?? 0) },
      };
    },
  };
}

export function createSpendLimitAdminRepository(db: Database): SpendLimitAdminStore {
  return {
    async list() {
      const [users, serviceKeys, groups] = await Promise.all([
        db.spendLimit.findMany({ where: { userId: { not: null } }, orderBy: { userId: 'asc' } }),
        db.spendLimit.findMany({ where: { serviceKey: { not: null } }, orderBy: { serviceKey: 'asc' } }),
        db.spendGroup.findMany({
          include: { limit: true, members: { orderBy: { userId: 'asc' } } },
          orderBy: { name: 'asc' },
        }),
      ]);
      return {
        users: users.map((row) => ({ userId: row.userId ?? '', limit: toLimit(row), updatedAt: row.updatedAt })),
        serviceKeys: serviceKeys.map((row) => ({
          keyId: row.serviceKey ?? '',
          limit: toLimit(row),
          updatedAt: row.updatedAt,
        })),
        groups: groups.map((group) => ({
          name: group.name,
          limit: group.limit ? toLimit(group.limit) : null,
          members: group.members.map((member) => member.userId),
          updatedAt: group.limit?.updatedAt ?? null,
        })),
      };
    },
    async setUserLimit(userId, limit) {
      await db.spendLimit.upsert({
        where: { userId },
        create: { userId, ...limit },
        update: { ...limit },
      });
    },
    async deleteUserLimit(userId) {
      return (await db.spendLimit.deleteMany({ where: { userId } })).count > 0;
    },
    async setServiceKeyLimit(keyId, limit) {
      await db.spendLimit.upsert({
        where: { serviceKey: keyId },
        create: { serviceKey: keyId, ...limit },
        update: { ...limit },
      });
    },
    async deleteServiceKeyLimit(keyId) {
      return (await db.spendLimit.deleteMany({ where: { serviceKey: keyId } })).count > 0;
    },
    async setGroup({ name, limit, members }) {
      await db.$transaction(async (transaction) => {
        const group = await transaction.spendGroup.upsert({
          where: { name },
          create: { id: randomUUID(), name },
          update: {},
        });
        if (limit) {
          await transaction.spendLimit.upsert({
            where: { groupId: group.id },
            create: { groupId: group.id, ...limit },
            update: { ...limit },
          });
        } else {
          await transaction.spendLimit.deleteMany({ where: { groupId: group.id } });
        }
        if (members) {
          // The members a token's group claim placed follow the token, not the admin's list.
          await transaction.spendGroupMember.deleteMany({ where: { groupId: group.id, viaClaim: false } });
          await transaction.spendGroupMember.createMany({
            data: [...new Set(members)].map((userId) => ({ groupId: group.id, userId })),
            skipDuplicates: true,
          });
        }
      });
    },
    async deleteGroup(name) {
      return (await db.spendGroup.deleteMany({ where: { name } })).count > 0;
    },
  };
}
