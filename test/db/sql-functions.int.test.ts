import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedTestDatabase } from '../support/databases';

// Issue 38 item 3: each PL/pgSQL function's current text lives in prisma/functions/<name>.sql, and the migrations
// leave exactly that in the database. A file changed without a migration (or a migration without the file) fails here.

const ROOT = path.resolve(import.meta.dirname, '../..');
const FUNCTIONS_DIR = path.join(ROOT, 'prisma/functions');
const files = readdirSync(FUNCTIONS_DIR)
  .filter((file) => file.endsWith('.sql'))
  .map((file) => file.slice(0, -'.sql'.length))
  .sort();

/** The same definition whatever its indentation or line breaks. */
const normalised = (definition: string) => definition.replace(/\s+/g, ' ').trim();

describe('prisma/functions: the source of each SQL function, held equal to the migrated database', () => {
  let database: { url: string; drop(): Promise<void> };
  let client: pg.Client;
  /** pg_get_functiondef of every function of that name in the schema (one unless it is overloaded). */
  const definitionsOf = async (name: string) =>
    (
      await client.query<{ definition: string }>(
        `SELECT pg_get_functiondef(p.oid) AS definition FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = current_schema() AND p.proname = $1 ORDER BY p.oid`,
        [name],
      )
    ).rows.map((row) => row.definition);

  beforeAll(async () => {
    database = await createMigratedTestDatabase('sql_functions');
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  it('has one file for each PL/pgSQL function of the migrated database, and none for a function it lacks', async () => {
    const { rows } = await client.query<{ name: string }>(
      `SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       JOIN pg_language l ON l.oid = p.prolang WHERE n.nspname = current_schema() AND l.lanname = 'plpgsql'
       ORDER BY p.proname`,
    );
    expect(files).toEqual(rows.map((row) => row.name));
  });

  // The file is run inside a transaction that is rolled back: what Postgres makes of it (pg_get_functiondef) must be
  // what the migrations made. A changed body or return type differs or fails; a changed parameter list would add an
  // overload instead of replacing the function, so the definitions of the name are compared as a list.
  it.each(files)('%s.sql defines the function exactly as migrated (whitespace aside)', async (name) => {
    const source = await readFile(path.join(FUNCTIONS_DIR, `${name}.sql`), 'utf8');
    const migrated = await definitionsOf(name);
    expect(migrated).toHaveLength(1);
    await client.query('BEGIN');
    try {
      await client.query(source);
      const fromFile = await definitionsOf(name);
      expect(fromFile.map(normalised)).toEqual(migrated.map(normalised));
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
