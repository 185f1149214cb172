import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { diffMigrationsAgainstSchema } from '../../scripts/prisma/diff-migrations-against-schema';
import { prismaMigrationStatus } from '../../scripts/prisma/prisma-migration-status';
import { applyMigrations, MigrationError, type MigrationLogger, type MigrationRow } from '../../src/db/migrate';
import { createTestDatabase } from '../support/databases';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MIGRATIONS_DIR = path.join(ROOT, 'prisma/migrations');
const SCHEMA_PATH = path.join(ROOT, 'prisma/schema.prisma');

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function freshDatabase(): Promise<string> {
  const database = await createTestDatabase('migrations');
  cleanups.push(database.drop);
  return database.url;
}

/** A copy of the committed migrations plus extra ones, in a temporary folder. */
async function migrationsDirWith(extra: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

function recordingLogger(): MigrationLogger & { lines: unknown[] } {
  const lines: unknown[] = [];
  const record = (objectOrMessage: object | string, message?: string) => {
    lines.push(message ?? objectOrMessage);
  };
  return { lines, info: record, warn: record, error: record };
}

async function query<Row extends pg.QueryResultRow>(databaseUrl: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<Row>(sql)).rows;
  } finally {
    await client.end();
  }
}

const committedMigrationNames = async () =>
  (await readdir(MIGRATIONS_DIR, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

describe('applyMigrations (the server migrating at start)', () => {
  it('brings a fresh database to exactly prisma/schema.prisma (no drift), and applies nothing the second time', async () => {
    const databaseUrl = await freshDatabase();
    const log = recordingLogger();
    expect(await applyMigrations({ databaseUrl, migrationsDir: MIGRATIONS_DIR, log })).toEqual(
      await committedMigrationNames(),
    );
    expect(await applyMigrations({ databaseUrl, migrationsDir: MIGRATIONS_DIR, log })).toEqual([]);

    // Prisma itself (its schema engine, as `prisma migrate status` / `deploy` use it) reads our history as complete.
    expect(
      await prismaMigrationStatus({ databaseUrl, migrationsDir: MIGRATIONS_DIR, schemaPath: SCHEMA_PATH }),
    ).toEqual({
      editedMigrationNames: [],
      failedMigrationNames: [],
      hasMigrationsTable: true,
      history: null,
    });

    // Prisma's schema engine compares a database migrated by the same path with schema.prisma.
    const drift = await diffMigrationsAgainstSchema({
      databaseUrl: inject('pgAdminUrl'),
      migrationsDir: MIGRATIONS_DIR,
      schemaPath: SCHEMA_PATH,
    });
    expect(drift, 'schema.prisma changed without a migration: run `npm run db:migration -- <name>`').toBe('');
  });

  it('records each migration in _prisma_migrations as Prisma does, with the sha256 of its file', async () => {
    const databaseUrl = await freshDatabase();
    await applyMigrations({ databaseUrl, migrationsDir: MIGRATIONS_DIR, log: recordingLogger() });
    const rows = await query<MigrationRow>(databaseUrl, 'SELECT * FROM _prisma_migrations ORDER BY migration_name');
    const names = await committedMigrationNames();
    expect(rows.map((row) => row.migration_name)).toEqual(names);
    for (const row of rows) {
      const file = await readFile(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(file).digest('hex'));
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(row.applied_steps_count).toBe(1);
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
    }
    // Prisma's own DDL for the table (types, nullability, defaults), so `prisma migrate deploy` reads it.
    const columns = await query(
      databaseUrl,
      `SELECT column_name, data_type, character_maximum_length, is_nullable, column_default
      FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      {
        column_name: 'id',
        data_type: 'character varying',
        character_maximum_length: 36,
        is_nullable: 'NO',
        column_default: null,
      },
      {
        column_name: 'checksum',
        data_type: 'character varying',
        character_maximum_length: 64,
        is_nullable: 'NO',
        column_default: null,
      },
      {
        column_name: 'finished_at',
        data_type: 'timestamp with time zone',
        character_maximum_length: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'migration_name',
        data_type: 'character varying',
        character_maximum_length: 255,
        is_nullable: 'NO',
        column_default: null,
      },
      {
        column_name: 'logs',
        data_type: 'text',
        character_maximum_length: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'rolled_back_at',
        data_type: 'timestamp with time zone',
        character_maximum_length: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'started_at',
        data_type: 'timestamp with time zone',
        character_maximum_length: null,
        is_nullable: 'NO',
        column_default: 'now()',
      },
      {
        column_name: 'applied_steps_count',
        data_type: 'integer',
        character_maximum_length: null,
        is_nullable: 'NO',
        column_default: '0',
      },
    ]);
  });

  it('stops loudly on a failing migration, rolls back its statements, and keeps refusing on the next start', async () => {
    const databaseUrl = await freshDatabase();
    const broken = '29990101000000_broken';
    const migrationsDir = await migrationsDirWith({
      [broken]:
        'CREATE TABLE "half_done" ("id" INTEGER);\nALTER TABLE "users" ADD COLUMN "nickname" TEXT;\nSELECT 1 / 0;\n',
      '29990102000000_after': 'CREATE TABLE "after_broken" ("id" INTEGER);\n',
    });
    const log = recordingLogger();

    const failure = await applyMigrations({ databaseUrl, migrationsDir, log }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MigrationError);
    expect(failure).toMatchObject({ code: 'MIGRATION_FAILED', migrationName: broken });
    expect((failure as Error).message).toContain(broken);
    expect((failure as Error).message).toContain('division by zero');

    const tables = await query<{ name: string | null }>(
      databaseUrl,
      `SELECT to_regclass('half_done')::text AS name UNION ALL SELECT to_regclass('after_broken')::text`,
    );
    expect(tables).toEqual([{ name: null }, { name: null }]);
    expect(
      await query(
        databaseUrl,
        `SELECT 1 FROM information_schema.columns WHERE table_name = 'users' AND column_name = 'nickname'`,
      ),
    ).toEqual([]);
    expect(await query(databaseUrl, 'SELECT 1 FROM users')).toEqual([]); // the earlier migration did apply

    // Recorded as Prisma records a failed migration, so `prisma migrate deploy` / `resolve` see the same state.
    const [row] = await query<MigrationRow>(
      databaseUrl,
      `SELECT * FROM _prisma_migrations WHERE migration_name = '${broken}'`,
    );
    expect(row).toMatchObject({ finished_at: null, rolled_back_at: null, applied_steps_count: 0 });
    expect(row!.logs).toContain('division by zero');
    expect(await prismaMigrationStatus({ databaseUrl, migrationsDir, schemaPath: SCHEMA_PATH })).toMatchObject({
      failedMigrationNames: [broken],
    });

    const again = await applyMigrations({ databaseUrl, migrationsDir, log }).catch((error: unknown) => error);
    expect(again).toMatchObject({ code: 'FAILED_MIGRATION_IN_DATABASE', migrationName: broken });
    expect((again as Error).message).toContain(broken);
  });

  it('refuses to start when an applied migration was edited', async () => {
    const databaseUrl = await freshDatabase();
    const edited = '29990101000000_edited';
    const migrationsDir = await migrationsDirWith({ [edited]: 'CREATE TABLE "edited" ("id" INTEGER);\n' });
    await applyMigrations({ databaseUrl, migrationsDir, log: recordingLogger() });
    await writeFile(path.join(migrationsDir, edited, 'migration.sql'), 'CREATE TABLE "edited" ("id" BIGINT);\n');

    await expect(applyMigrations({ databaseUrl, migrationsDir, log: recordingLogger() })).rejects.toMatchObject({
      code: 'MIGRATION_MODIFIED',
      migrationName: edited,
    });
    expect(await prismaMigrationStatus({ databaseUrl, migrationsDir, schemaPath: SCHEMA_PATH })).toMatchObject({
      editedMigrationNames: [edited],
    });
  });

  it('lets only one of two processes starting at once migrate; the other waits and finds nothing pending', async () => {
    const databaseUrl = await freshDatabase();
    // A slow last migration keeps the lock held long enough for the second caller to queue behind it.
    const migrationsDir = await migrationsDirWith({
      '29990101000000_slow': 'SELECT pg_sleep(0.5);\nCREATE TABLE "slow" ("id" INTEGER);\n',
    });
    const all = [...(await committedMigrationNames()), '29990101000000_slow'];

    const results = await Promise.all([
      applyMigrations({ databaseUrl, migrationsDir, log: recordingLogger() }),
      applyMigrations({ databaseUrl, migrationsDir, log: recordingLogger() }),
    ]);

    expect(results.map((applied) => applied.length).sort()).toEqual([0, all.length]);
    const rows = await query<{ migration_name: string; count: number }>(
      databaseUrl,
      'SELECT migration_name, count(*)::int AS count FROM _prisma_migrations GROUP BY migration_name ORDER BY migration_name',
    );
    expect(rows).toEqual(all.map((name) => ({ migration_name: name, count: 1 })));
  });
});
