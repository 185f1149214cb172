import { AppError } from '../core/errors';
import type { Prisma } from './generated/client';
import type { Database } from './prisma-client';

function quotaExceeded(count: number, maxThreads: number): AppError {
  return new AppError('QUOTA_EXCEEDED', `You have ${count} threads, the most one user may keep (MAX_THREADS_PER_USER = ${maxThreads}); delete one to start another.`);
}

/**
 * Inside a transaction that creates a thread for `ownerId` (a new thread, a fork): serializes the owner's thread
 * creations with a transaction-scoped advisory lock, then refuses with QUOTA_EXCEEDED when the owner already has
 * `maxThreads` threads. The lock makes the cap exact under concurrent creations, across processes.
 */
export async function claimThreadSlot(tx: Prisma.TransactionClient, ownerId: string, maxThreads: number): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended('threads-of:' || ${ownerId}::text, 0))`;
  // Counted after the lock is held, so this snapshot sees every creation that held it before.
  const rows = await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM threads WHERE owner_id = ${ownerId}::text`;
  const count = rows[0]?.n ?? 0;
  if (count >= maxThreads) throw quotaExceeded(count, maxThreads);
}

/**
 * The same check outside a transaction, before a fork is written: a count, so two forks racing at the cap may both
 * pass (the fork statement itself does not take the lock; threads created through createThread are exact).
 */
export async function assertThreadRoom(db: Database, ownerId: string, maxThreads: number): Promise<void> {
  const count = await db.thread.count({ where: { ownerId } });
  if (count >= maxThreads) throw quotaExceeded(count, maxThreads);
}
