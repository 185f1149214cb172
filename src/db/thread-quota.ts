import { threadQuotaExceeded } from '../core/limits/thread-quota';
import { Prisma } from './generated/client';
import type { Database } from './prisma-client';

/**
 * The owner's thread-creation lock (transaction-scoped advisory lock): every statement that creates a thread for
 * `ownerId` (a new thread, a fork) takes it first, so a count taken after it sees every creation before it.
 */
export function ownerThreadsLock(ownerId: string): Prisma.Sql {
  return Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended('threads-of:' || ${ownerId}::text, 0))`;
}

/**
 * Inside a transaction that creates a thread for `ownerId`: takes the owner's lock, then refuses with QUOTA_EXCEEDED
 * when the owner already has `maxThreads` threads. The lock makes the cap exact under concurrent creations, across
 * processes.
 */
export async function claimThreadSlot(
  tx: Prisma.TransactionClient,
  ownerId: string,
  maxThreads: number,
): Promise<void> {
  await tx.$executeRaw(ownerThreadsLock(ownerId));
  // Counted after the lock is held, so this snapshot sees every creation that held it before.
  const rows = await tx.$queryRaw<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM threads WHERE owner_id = ${ownerId}::text`;
  const count = rows[0]?.n ?? 0;
  if (count >= maxThreads) throw threadQuotaExceeded(count, maxThreads, 'start another');
}

/**
 * An early check before a fork or an edit spends anything (rate limit, statements): a plain count. The fork
 * statement itself takes the owner's lock and counts again, so the cap stays exact.
 */
export async function assertThreadRoom(db: Database, ownerId: string, maxThreads: number): Promise<void> {
  const count = await db.thread.count({ where: { ownerId } });
  if (count >= maxThreads) throw threadQuotaExceeded(count, maxThreads, 'branch');
}
