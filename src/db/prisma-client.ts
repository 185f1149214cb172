import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client';

export type Database = InstanceType<typeof PrismaClient>;

/** Prisma 7 over node-postgres (the query compiler is wasm: no native engine is needed at run time). */
export function createDatabase(options: { url: string; poolSize?: number }): Database {
  const adapter = new PrismaPg({ connectionString: options.url, max: options.poolSize ?? 20 });
  return new PrismaClient({ adapter });
}

/** True when Prisma reports a unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === 'P2002';
}
