import type { Database } from './prisma-client';

/** The readiness probe's Postgres check: true when a trivial statement comes back (throws when it cannot run). */
export async function pingDatabase(db: Database): Promise<boolean> {
  return (await db.$queryRaw<{ ok: number }[]>`SELECT 1 AS ok`).length === 1;
}
