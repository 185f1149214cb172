import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DiagnoseMigrationHistoryOutput, MigrationList } from '@prisma/schema-engine-wasm';
import { readSchemaFiles } from './diff-migrations-against-schema';
import { withSchemaEngine } from './schema-engine';

/** The migrations folder as Prisma's schema engine takes it. */
export async function readMigrationList(migrationsDir: string): Promise<MigrationList> {
  const baseDir = path.resolve(migrationsDir);
  const entries = await readdir(baseDir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const lockPath = path.join(baseDir, 'migration_lock.toml');
  return {
    baseDir,
    lockfile: { path: 'migration_lock.toml', content: await readFile(lockPath, 'utf8').catch(() => null) },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      names.map(async (name) => ({
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: await readFile(path.join(baseDir, name, 'migration.sql'), 'utf8').then(
            (value) => ({ tag: 'ok' as const, value }),
            (error: Error) => ({ tag: 'error' as const, value: error.message }),
          ),
        },
      })),
    ),
  };
}

/**
 * What Prisma itself (`prisma migrate status`, through its schema engine) says about a database's
 * migration history against a migrations folder: failed, edited and unapplied migrations.
 */
export async function prismaMigrationStatus(options: {
  databaseUrl: string;
  migrationsDir: string;
  schemaPath: string;
}): Promise<DiagnoseMigrationHistoryOutput> {
  const schemaFiles = await readSchemaFiles(options.schemaPath);
  const migrationsList = await readMigrationList(options.migrationsDir);
  return withSchemaEngine({ schemaFiles, target: { databaseUrl: options.databaseUrl } }, (engine) =>
    engine.diagnoseMigrationHistory({
      migrationsList,
      optInToShadowDatabase: false,
      filters: { externalTables: [], externalEnums: [] },
    }),
  );
}
