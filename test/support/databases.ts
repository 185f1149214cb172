import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { applyMigrations } from '../../src/db/migrate';
import { createDatabase, type Database } from '../../src/db/prisma-client';

function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs one statement on the test server's `postgres` database. */
export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database on the test server: empty, or with `migrated` a copy of the run's migrated template (every
 * migration applied once in global setup). `drop()` removes it (closing leftover connections).
 */
export async function createTestDatabase(
  prefix = 'test',
  options: { migrated?: boolean } = {},
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${prefix.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(5).toString('hex')}`;
  await adminQuery(
    options.migrated
      ? `CREATE DATABASE "${name}" TEMPLATE "${inject('pgMigratedTemplate')}"`
      : `CREATE DATABASE "${name}"`,
  );
  return {
    name,
    url: databaseUrl(inject('pgAdminUrl'), name),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/** The project's migrations (prisma/migrations). */
export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../prisma/migrations');

/** A logger that says nothing (migrations and repositories under test). */
export const silentLog = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};

/** Applies the project's migrations to `databaseUrl`, quietly. */
export async function migrateTestDatabase(databaseUrl: string): Promise<void> {
  await applyMigrations({ databaseUrl, migrationsDir: MIGRATIONS_DIR, log: silentLog });
}

/** A fresh database on the test server (createTestDatabase) with every migration applied to it. */
export async function createMigratedTestDatabase(prefix: string): ReturnType<typeof createTestDatabase> {
  const database = await createTestDatabase(prefix);
  await migrateTestDatabase(database.url);
  return database;
}

/**
 * One migrated test database and its Prisma client for a file of contract suites: created before all its cases and
 * dropped after them. The cases keep apart by working on their own users and threads (random ids).
 */
export function useSuiteDatabase(prefix: string, options: { poolSize?: number } = {}): { readonly db: Database } {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let db: Database | undefined;
  beforeAll(async () => {
    database = await createMigratedTestDatabase(prefix);
    db = createDatabase({ url: database.url, poolSize: options.poolSize ?? 4 });
  });
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });
  return {
    get db(): Database {
      if (!db) throw new Error('the suite database is opened in beforeAll');
      return db;
    },
  };
}
