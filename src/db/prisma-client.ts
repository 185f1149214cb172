import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/client';
import { preparedStatementName } from './prepared-statement';
import { createSqlRunner, type SqlRunner } from './sql-runner';

/** Prisma, and the hot path's raw SQL on the same pool (`sql`, see sql-runner.ts). */
export type Database = InstanceType<typeof PrismaClient> & { readonly sql: SqlRunner };

/** How long a query waits for a free connection before it fails (as unavailable) instead of hanging. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Prisma 7 over node-postgres (the query compiler is wasm: no native engine is needed at run time), on a pool this
 * module owns so the hot path can use it directly; `$disconnect` ends the pool. Statements marked with `prepared()`
 * (src/db/prepared-statement.ts) are sent as named prepared statements, through Prisma or `sql`; every other one unnamed.
 */
export function createDatabase(options: { url: string; poolSize?: number }): Database {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 20,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // A connection that breaks while idle is dropped by the pool and the next query opens another: without a
  // listener, the error would end the process.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({
    adapter: new PrismaPg(pool, { statementNameGenerator: (query) => preparedStatementName(query.sql) }),
  });
  const disconnect = prisma.$disconnect.bind(prisma);
  // Ended here, not by the adapter: a process whose Prisma never connected still closes the hot path's connections.
  return Object.assign(prisma, {
    sql: createSqlRunner(pool),
    async $disconnect() {
      await disconnect();
      if (!pool.ended) await pool.end();
    },
  });
}

/**
 * True when a statement broke a unique constraint: from the ORM (P2002), from Prisma's raw SQL (P2010 with 23505)
 * or from the driver directly (23505).
 */
export function isUniqueViolation(error: unknown): boolean {
  const known = error as {
    code?: string;
    meta?: { code?: string; driverAdapterError?: { cause?: { kind?: string } } };
  } | null;
  if (known?.code === 'P2002' || known?.code === '23505') return true;
  return (
    known?.code === 'P2010' &&
    (known.meta?.code === '23505' || known.meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation')
  );
}
