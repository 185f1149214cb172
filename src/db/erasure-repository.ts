import type { ErasureStore } from '../core/ports';
import { Prisma } from './generated/client';
import { keepModelCallsOf } from './keep-model-calls';
import type { Database } from './prisma-client';

/** Erasure of a user (issue 27): the tombstone table erased_users and one transaction deleting everything else. */
export function createErasureRepository(db: Database): ErasureStore & {
  /** Guests whose account is older than `before` (the retention sweep). */
  guestsCreatedBefore(before: Date, limit: number): Promise<string[]>;
  /**
   * Deletes threads idle since `before` (RETENTION_DAYS), their call records kept anonymised; returns their ids and
   * their tool runs' (for their jobs).
   */
  deleteIdleThreads(before: Date, limit: number): Promise<{ threadIds: string[]; runIds: string[] }>;
} {
  return {
    async erasureOf(userId) {
      // On every authenticated request: through the hot path's runner (sql-runner.ts), not the ORM's.
      const rows = await db.sql.rows<{ erasedAt: Date; kind: string }>(Prisma.sql`
        SELECT erased_at AS "erasedAt", kind FROM erased_users WHERE user_id = ${userId}`);
      const row = rows[0];
      return row ? { erasedAt: row.erasedAt, kind: row.kind === 'guest' ? 'guest' : 'external' } : null;
    },

    async threadIdsOf(userId) {
      const rows = await db.$queryRaw<{ id: string }[]>`SELECT id::text FROM threads WHERE owner_id = ${userId}`;
      return rows.map((row) => row.id);
    },

    async toolRunIdsOfThread(threadId) {
      const rows = await db.$queryRaw<
        { id: string }[]
      >`SELECT id::text FROM tool_runs WHERE thread_id = ${threadId}::uuid`;
      return rows.map((row) => row.id);
    },

    async toolRunIdsOf(userId) {
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT r.id::text FROM tool_runs r JOIN threads t ON t.id = r.thread_id WHERE t.owner_id = ${userId}`;
      return rows.map((row) => row.id);
    },

    async erase({ userId, kind }) {
      return db.$transaction(
        async (tx) => {
          const users = await tx.$queryRaw<{ kind: string }[]>`SELECT kind FROM users WHERE id = ${userId} FOR UPDATE`;
          const erasedKind = users[0]?.kind === 'guest' ? 'guest' : users[0] ? 'external' : kind;
          const threads = await tx.$queryRaw<
            { id: string }[]
          >`SELECT id::text FROM threads WHERE owner_id = ${userId} FOR UPDATE`;
          const ids = threads.map((row) => row.id);
          // Running runs see their cancel flag (and then their row gone): their workers stop.
          await tx.$executeRaw`UPDATE tool_runs SET cancel_requested = true WHERE thread_id = ANY(${ids}::uuid[]) AND status IN ('queued', 'running')`;
          // Audit rows keep who acted and when, never content.
          await tx.$executeRaw`UPDATE audit_log SET details = '{}'::jsonb WHERE thread_id = ANY(${ids}::uuid[]) OR details->>'ownerId' = ${userId} OR details->>'userId' = ${userId}`;
          // Their call records stay for the costs, anonymised: the threads' are detached here; the rest (a /v1 client's
          // background requests) lose their user with the user row (ON DELETE SET NULL).
          await tx.$executeRaw(keepModelCallsOf(ids, { anonymise: true }));
          // Spend limits: what the user's calls in flight held goes back to their accounts (a guest's address's too),
          // then their limit, memberships and spending (the accounts are named `user:<id>`) go.
          await tx.$executeRaw`SELECT spend_release(CASE WHEN turn_id IS NULL THEN id END, turn_id, 0) FROM spend_reservations WHERE user_id = ${userId}`;
          await tx.$executeRaw`
          WITH limits AS (DELETE FROM spend_limits WHERE user_id = ${userId}),
            members AS (DELETE FROM spend_group_members WHERE user_id = ${userId}),
            days AS (DELETE FROM spend_days WHERE account = ${`user:${userId}`})
          DELETE FROM spend_accounts WHERE account = ${`user:${userId}`}`;
          const deleted = await tx.$executeRaw`DELETE FROM users WHERE id = ${userId}`;
          await tx.$executeRaw`
          INSERT INTO erased_users (user_id, kind, erased_at) VALUES (${userId}, ${erasedKind}, clock_timestamp())
          ON CONFLICT (user_id) DO UPDATE SET erased_at = excluded.erased_at, kind = CASE WHEN erased_users.kind = 'guest' THEN 'guest' ELSE excluded.kind END`;
          return { existed: deleted > 0, threads: ids.length };
        },
        { timeout: 60_000 },
      );
    },

    async guestsCreatedBefore(before, limit) {
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT id FROM users WHERE kind = 'guest' AND created_at < ${before} ORDER BY created_at LIMIT ${limit}::int`;
      return rows.map((row) => row.id);
    },

    async deleteIdleThreads(before, limit) {
      // One transaction over the locked threads: their runs are read, their call records anonymised, then they go.
      return db.$transaction(
        async (tx) => {
          const threads = await tx.$queryRaw<{ id: string }[]>`
            SELECT id::text FROM threads WHERE last_activity_at < ${before} AND (lease_owner IS NULL OR lease_expires_at < now())
            ORDER BY last_activity_at LIMIT ${limit}::int FOR UPDATE SKIP LOCKED`;
          const threadIds = threads.map((row) => row.id);
          if (threadIds.length === 0) return { threadIds, runIds: [] };
          const runs = await tx.$queryRaw<{ id: string }[]>`
            SELECT id::text FROM tool_runs WHERE thread_id = ANY(${threadIds}::uuid[])`;
          await tx.$executeRaw(keepModelCallsOf(threadIds, { anonymise: true }));
          await tx.$executeRaw`DELETE FROM threads WHERE id = ANY(${threadIds}::uuid[])`;
          return { threadIds, runIds: runs.map((row) => row.id) };
        },
        { timeout: 60_000 },
      );
    },
  };
}
