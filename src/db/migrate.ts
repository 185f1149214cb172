import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';

// Applies the committed Prisma-format migrations (prisma/migrations/<name>/migration.sql) without
// Prisma's native schema engine, and records them in `_prisma_migrations` exactly as Prisma does,
// so an online `prisma migrate deploy` / `migrate status` agrees with what we applied.
// Unlike Prisma, each migration and its bookkeeping row commit in one transaction: a crash
// half-way leaves nothing behind, and a failing script is recorded as failed afterwards.

/** pino-compatible logger: `info(obj, msg)` or `info(msg)`. */
export interface MigrationLogger {
  info(objectOrMessage: object | string, message?: string): void;
  warn(objectOrMessage: object | string, message?: string): void;
  error(objectOrMessage: object | string, message?: string): void;
}

export interface ApplyMigrationsOptions {
  /** Postgres URL of the database to migrate. */
  databaseUrl: string;
  /** Folder holding `<timestamp>_<name>/migration.sql` folders (Prisma's layout). */
  migrationsDir: string;
  log: MigrationLogger;
  /** How long to wait for another process holding the migration lock. Default 5 minutes. */
  lockTimeoutMs?: number;
}

export type MigrationErrorCode =
  | 'MIGRATION_FAILED' // a pending migration's SQL failed (rolled back, recorded as failed)
  | 'FAILED_MIGRATION_IN_DATABASE' // like Prisma's P3009: a previous attempt failed and was not resolved
  | 'MIGRATION_MODIFIED' // an applied migration's file changed since it was applied
  | 'INVALID_MIGRATIONS_DIR'
  | 'LOCK_TIMEOUT';

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  constructor(
    readonly code: MigrationErrorCode,
    message: string,
    readonly migrationName?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface MigrationFile {
  name: string;
  script: string;
  checksum: string;
}

export interface MigrationRow {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
  logs: string | null;
}

/** Same key as Prisma's schema engine, so we also exclude a concurrent `prisma migrate deploy`. */
export const PRISMA_ADVISORY_LOCK_KEY = 72707369;

/** Prisma's DDL for PostgreSQL, verbatim (schema-engine sql-schema-connector). */
export const PRISMA_MIGRATIONS_TABLE_DDL = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);`;

/** sha256 hex of the script, as Prisma stores it in `_prisma_migrations.checksum`. */
export function migrationChecksum(script: string): string {
  return createHash('sha256').update(script, 'utf8').digest('hex');
}

/** Like Prisma, tolerate a checkout that converted line endings (git autocrlf) since the migration was applied. */
function checksumMatches(file: MigrationFile, stored: string): boolean {
  if (file.checksum === stored) return true;
  const lf = file.script.replace(/\r\n/g, '\n');
  return migrationChecksum(lf) === stored || migrationChecksum(lf.replace(/\n/g, '\r\n')) === stored;
}

/** Reads `<dir>/<name>/migration.sql` for every sub-folder, sorted by name like Prisma. */
export async function readMigrationFiles(migrationsDir: string): Promise<MigrationFile[]> {
  let entries;
  try {
    entries = await readdir(migrationsDir, { withFileTypes: true });
  } catch (error) {
    throw new MigrationError('INVALID_MIGRATIONS_DIR', `Cannot read migrations folder ${migrationsDir}`, undefined, {
      cause: error,
    });
  }
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const file = path.join(migrationsDir, name, 'migration.sql');
      let script: string;
      try {
        script = await readFile(file, 'utf8');
      } catch (error) {
        throw new MigrationError('INVALID_MIGRATIONS_DIR', `Migration ${name} has no readable ${file}`, name, {
          cause: error,
        });
      }
      return { name, script, checksum: migrationChecksum(script) };
    }),
  );
}

/**
 * Decides what to apply, refusing like Prisma on a failed or modified migration.
 * Rows that were rolled back (`prisma migrate resolve --rolled-back`) are ignored.
 */
export function planMigrations(
  files: MigrationFile[],
  rows: MigrationRow[],
): { pending: MigrationFile[]; unknownApplied: string[] } {
  const live = rows.filter((row) => row.rolled_back_at === null);
  const failed = live.find((row) => row.finished_at === null);
  if (failed) {
    throw new MigrationError(
      'FAILED_MIGRATION_IN_DATABASE',
      `Migration ${failed.migration_name} failed earlier (started ${failed.started_at.toISOString()}) and is not resolved, so no migration will be applied. ` +
        `Fix the database by hand, then mark it with \`prisma migrate resolve --rolled-back ${failed.migration_name}\` (or delete its row in _prisma_migrations). ` +
        `Logged error: ${failed.logs ?? '(none)'}`,
      failed.migration_name,
    );
  }
  const filesByName = new Map(files.map((file) => [file.name, file]));
  for (const row of live) {
    const file = filesByName.get(row.migration_name);
    if (file && !checksumMatches(file, row.checksum)) {
      throw new MigrationError(
        'MIGRATION_MODIFIED',
        `The migration ${row.migration_name} was modified after it was applied (checksum ${row.checksum} in the database, ${file.checksum} on disk). ` +
          'Restore the file; put schema changes in a new migration instead.',
        row.migration_name,
      );
    }
  }
  const appliedNames = new Set(live.map((row) => row.migration_name));
  return {
    pending: files.filter((file) => !appliedNames.has(file.name)),
    unknownApplied: [...appliedNames].filter((name) => !filesByName.has(name)),
  };
}

/**
 * Applies pending migrations in name order, each in its own transaction, under Prisma's advisory
 * lock held on one dedicated connection (a second process waits, then finds nothing pending).
 * Throws a `MigrationError` naming the migration when one fails or when the history is not sound.
 * Returns the names applied by this call.
 */
export async function applyMigrations(options: ApplyMigrationsOptions): Promise<string[]> {
  const { databaseUrl, migrationsDir, log, lockTimeoutMs = 5 * 60_000 } = options;
  const files = await readMigrationFiles(migrationsDir);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'migrate' });
  // A dropped connection surfaces as the pending query's rejection; don't let the event crash the process.
  client.on('error', (error) => log.error({ err: error }, 'migration connection error'));
  await client.connect();
  try {
    await acquireLock(client, lockTimeoutMs);
    try {
      await ensureMigrationsTable(client);
      const { rows } = await client.query<MigrationRow>('SELECT * FROM _prisma_migrations ORDER BY started_at ASC');
      const { pending, unknownApplied } = planMigrations(files, rows);
      if (unknownApplied.length > 0) {
        log.warn(
          { migrations: unknownApplied },
          'migrations applied to the database are missing from the migrations folder',
        );
      }
      const applied: string[] = [];
      for (const migration of pending) {
        await applyOne(client, migration, log);
        applied.push(migration.name);
      }
      log.info(
        { applied, total: files.length },
        applied.length > 0 ? `applied ${applied.length} migration(s)` : 'database schema is up to date',
      );
      return applied;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

async function acquireLock(client: pg.Client, lockTimeoutMs: number): Promise<void> {
  // lock_timeout bounds the wait on the advisory lock; it is reset so migrations are not bound by it.
  await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
  } catch (error) {
    if ((error as { code?: string }).code === '55P03') {
      throw new MigrationError(
        'LOCK_TIMEOUT',
        `Timed out after ${lockTimeoutMs} ms waiting for the migration lock held by another process`,
        undefined,
        { cause: error },
      );
    }
    throw error;
  } finally {
    await client.query('RESET lock_timeout');
  }
}

async function ensureMigrationsTable(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ exists: boolean }>(
    `SELECT to_regclass('_prisma_migrations') IS NOT NULL AS exists`,
  );
  if (!rows[0]?.exists) await client.query(PRISMA_MIGRATIONS_TABLE_DDL);
}

async function applyOne(client: pg.Client, migration: MigrationFile, log: MigrationLogger): Promise<void> {
  const id = randomUUID();
  log.info({ migration: migration.name }, `applying migration ${migration.name}`);
  await client.query('BEGIN');
  let startedAt: Date;
  try {
    const inserted = await client.query<{ started_at: Date }>(
      'INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ($1, $2, $3) RETURNING started_at',
      [id, migration.checksum, migration.name],
    );
    startedAt = inserted.rows[0]!.started_at;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  try {
    // No parameters: the simple-query protocol runs the whole multi-statement script.
    await client.query(migration.script);
  } catch (error) {
    await client.query('ROLLBACK');
    await recordFailure(client, { id, migration, startedAt, error });
    log.error({ migration: migration.name, err: error }, `migration ${migration.name} failed and was rolled back`);
    throw new MigrationError(
      'MIGRATION_FAILED',
      `Migration ${migration.name} failed: ${describePgError(error)}`,
      migration.name,
      { cause: error },
    );
  }
  await client.query(
    'UPDATE _prisma_migrations SET applied_steps_count = applied_steps_count + 1, finished_at = clock_timestamp() WHERE id = $1',
    [id],
  );
  await client.query('COMMIT');
}

// The failed row (finished_at NULL) makes every later start refuse until someone resolves it,
// exactly as Prisma leaves it, so `prisma migrate resolve` works on our databases too.
async function recordFailure(
  client: pg.Client,
  failure: { id: string; migration: MigrationFile; startedAt: Date; error: unknown },
): Promise<void> {
  const { id, migration, startedAt, error } = failure;
  const logs = `Migration ${migration.name} failed to apply. Its statements were rolled back.\n\n${describePgError(error)}`;
  await client.query(
    'INSERT INTO _prisma_migrations (id, checksum, migration_name, logs, started_at, applied_steps_count) VALUES ($1, $2, $3, $4, $5, 0)',
    [id, migration.checksum, migration.name, logs, startedAt],
  );
}

function describePgError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const details = error as Error & { code?: string; detail?: string; position?: string; where?: string };
  return [
    details.code ? `${details.code}: ${error.message}` : error.message,
    details.detail && `Detail: ${details.detail}`,
    details.position && `Position: ${details.position}`,
    details.where && `Where: ${details.where}`,
  ]
    .filter(Boolean)
    .join('\n');
}
