import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  migrationChecksum,
  planMigrations,
  readMigrationFiles,
  type MigrationFile,
  type MigrationRow,
} from './migrate';

const file = (name: string, script = `-- ${name}\n`): MigrationFile => ({
  name,
  script,
  checksum: migrationChecksum(script),
});

function row(migration: MigrationFile, overrides: Partial<MigrationRow> = {}): MigrationRow {
  return {
    id: `id-${migration.name}`,
    checksum: migration.checksum,
    migration_name: migration.name,
    started_at: new Date('2026-01-01T00:00:00Z'),
    finished_at: new Date('2026-01-01T00:00:01Z'),
    rolled_back_at: null,
    applied_steps_count: 1,
    logs: null,
    ...overrides,
  };
}

describe('migrationChecksum', () => {
  it('is the sha256 hex digest Prisma stores', () => {
    expect(migrationChecksum('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(migrationChecksum('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('planMigrations', () => {
  const first = file('20260101000000_init');
  const second = file('20260102000000_add_tags');

  it('returns the migrations not yet applied, in order', () => {
    expect(planMigrations([first, second], []).pending).toEqual([first, second]);
    expect(planMigrations([first, second], [row(first)]).pending).toEqual([second]);
    expect(planMigrations([first, second], [row(first), row(second)]).pending).toEqual([]);
  });

  it('refuses while a failed migration is unresolved, naming it', () => {
    const failed = row(second, { finished_at: null, applied_steps_count: 0, logs: 'boom' });
    expect(() => planMigrations([first, second], [row(first), failed])).toThrowError(
      expect.objectContaining({
        code: 'FAILED_MIGRATION_IN_DATABASE',
        migrationName: second.name,
        message: expect.stringContaining(second.name),
      }),
    );
  });

  it('re-applies a migration resolved as rolled back, as Prisma does', () => {
    const rolledBack = row(second, { finished_at: null, rolled_back_at: new Date() });
    expect(planMigrations([first, second], [row(first), rolledBack]).pending).toEqual([second]);
  });

  it('refuses when an applied migration was edited, but accepts a CRLF -> LF conversion', () => {
    const edited = file(first.name, '-- changed\n');
    expect(() => planMigrations([edited], [row(first)])).toThrowError(
      expect.objectContaining({ code: 'MIGRATION_MODIFIED', migrationName: first.name }),
    );
    const withCrlf = row(file(first.name, 'A;\r\nB;\r\n'));
    expect(planMigrations([file(first.name, 'A;\nB;\n')], [withCrlf]).pending).toEqual([]);
  });

  it('reports applied migrations missing from the folder without failing', () => {
    expect(planMigrations([second], [row(first), row(second)])).toEqual({ pending: [], unknownApplied: [first.name] });
  });
});

describe('readMigrationFiles', () => {
  let dir: string;
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('reads every <name>/migration.sql sorted by name, ignoring migration_lock.toml', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'read-migrations-'));
    for (const name of ['20260102000000_b', '20260101000000_a']) {
      await mkdir(path.join(dir, name));
      await writeFile(path.join(dir, name, 'migration.sql'), `-- ${name}\n`);
    }
    await writeFile(path.join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
    expect(await readMigrationFiles(dir)).toEqual([file('20260101000000_a'), file('20260102000000_b')]);
  });

  it('fails naming a migration folder without migration.sql', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'read-migrations-'));
    await mkdir(path.join(dir, '20260101000000_empty'));
    await expect(readMigrationFiles(dir)).rejects.toMatchObject({
      code: 'INVALID_MIGRATIONS_DIR',
      migrationName: '20260101000000_empty',
    });
  });
});
