import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

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
