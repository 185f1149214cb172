import { describe, expect, it } from 'vitest';
import { migrationFolderName, slugifyMigrationName } from '../../scripts/prisma/migration-folder-name';

describe('migration folder names', () => {
  it('uses Prisma’s UTC timestamp prefix and a snake_case name', () => {
    expect(migrationFolderName('Add thread tags', new Date('2026-03-04T05:06:07.890Z'))).toBe(
      '20260304050607_add_thread_tags',
    );
  });

  it('rejects a name with nothing usable in it', () => {
    expect(slugifyMigrationName('  --Index: messages!  ')).toBe('index_messages');
    expect(() => slugifyMigrationName('!!!')).toThrow(/not a usable migration name/);
  });
});
