import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client';
import { preparedStatementName } from './prepared-statement';

export type Database = InstanceType<typeof PrismaClient>;

/**
 * Prisma 7 over node-postgres (the query compiler is wasm: no native engine is needed at run time). Statements marked
 * with `prepared()` (src/db/prepared-statement.ts) are sent as named prepared statements; every other one unnamed.
 */
export function createDatabase(options: { url: string; poolSize?: number }): Database {
  const adapter = new PrismaPg({ connectionString: options.url, max: options.poolSize ?? 20 }, { statementNameGenerator: (query) => preparedStatementName(query.sql) });
  return new PrismaClient({ adapter });
}

/** True when Prisma reports a unique-constraint violation (from the ORM, P2002, or from raw SQL, P2010 with 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const known = error as { code?: string; meta?: { code?: string; driverAdapterError?: { cause?: { kind?: string } } } } | null;
  if (known?.code === 'P2002') return true;
  return known?.code === 'P2010' && (known.meta?.code === '23505' || known.meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation');
}
