import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { applyMigrations, type MigrationLogger } from '../../src/db/migrate';
import { withScratchDatabase } from './scratch-database';
import { withSchemaEngine } from './schema-engine';

export interface DiffMigrationsOptions {
  /** Postgres URL with the CREATEDB privilege; the scratch database is created next to it and dropped after. */
  databaseUrl: string;
  /** Prisma migrations folder (default layout: prisma/migrations). */
  migrationsDir: string;
  /** schema.prisma, or a folder of .prisma files. */
  schemaPath: string;
}

const silentLogger: MigrationLogger = { info() {}, warn() {}, error() {} };
const noFilters = { externalTables: [], externalEnums: [] };

/**
 * Applies every migration of `migrationsDir` to a fresh scratch database by the server's own path
 * (applyMigrations), then asks Prisma's schema engine for the SQL that takes that database to
 * `schemaPath`. Returns '' when they match (no drift, nothing to migrate); otherwise the migration
 * script Prisma would write (the engine ignores `_prisma_migrations`).
 */
export async function diffMigrationsAgainstSchema(options: DiffMigrationsOptions): Promise<string> {
  const schemaFiles = await readSchemaFiles(options.schemaPath);
  return withScratchDatabase(options.databaseUrl, 'prisma_diff', async (database) => {
    await applyMigrations({ databaseUrl: database.url, migrationsDir: options.migrationsDir, log: silentLogger });
    return withSchemaEngine({ schemaFiles, target: { databaseUrl: database.url } }, async (engine) => {
      const result = await engine.diff({
        from: {
          tag: 'schemaDatasource',
          files: schemaFiles,
          configDir: path.dirname(path.resolve(options.schemaPath)),
        },
        to: { tag: 'schemaDatamodel', files: schemaFiles },
        script: true,
        exitCode: true, // 2 when the diff is not empty
        filters: noFilters,
      });
      return result.exitCode === 0 ? '' : (result.stdout ?? '');
    });
  });
}

/** The SQL that creates `schemaPath` from nothing (no database needed). */
export async function diffEmptyAgainstSchema(schemaPath: string): Promise<string> {
  const schemaFiles = await readSchemaFiles(schemaPath);
  return withSchemaEngine({ schemaFiles }, async (engine) => {
    const result = await engine.diff({
      from: { tag: 'empty' },
      to: { tag: 'schemaDatamodel', files: schemaFiles },
      script: true,
      exitCode: true,
      filters: noFilters,
    });
    return result.exitCode === 0 ? '' : (result.stdout ?? '');
  });
}

/** Reads a schema file, or every .prisma file under a schema folder (Prisma's multi-file schemas). */
export async function readSchemaFiles(schemaPath: string): Promise<{ path: string; content: string }[]> {
  const resolved = path.resolve(schemaPath);
  if (!(await stat(resolved)).isDirectory()) return [{ path: resolved, content: await readFile(resolved, 'utf8') }];
  const names = (await readdir(resolved, { recursive: true })).filter((name) => name.endsWith('.prisma')).sort();
  return Promise.all(
    names.map(async (name) => {
      const file = path.join(resolved, name);
      return { path: file, content: await readFile(file, 'utf8') };
    }),
  );
}
