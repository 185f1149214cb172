import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionMigrationSql } from '../../scripts/prisma/function-migration-sql';

const FUNCTIONS_DIR = path.resolve(import.meta.dirname, '../../prisma/functions');

describe('functionMigrationSql (npm run db:migration -- <name> --function <fn>)', () => {
  it("copies a function's file into the migration: its doc comment and CREATE OR REPLACE, not the file's header", async () => {
    const sql = await functionMigrationSql(FUNCTIONS_DIR, ['chat_next_turn', 'chat_release_lease']);
    expect(sql).not.toContain('source of truth');
    expect(sql.startsWith("-- The runner's step before a thread's first turn")).toBe(true);
    expect(sql).toContain('CREATE OR REPLACE FUNCTION chat_next_turn(p_thread_id uuid, p_owner text, p_ttl_ms int)');
    expect(sql).toContain('CREATE OR REPLACE FUNCTION chat_release_lease(p_thread_id uuid, p_owner text)');
    expect(sql.indexOf('chat_next_turn(')).toBeLessThan(sql.indexOf('chat_release_lease('));
    expect(await functionMigrationSql(FUNCTIONS_DIR, [])).toBe('');
  });

  it('refuses a function without a file, and a name that is not one', async () => {
    await expect(functionMigrationSql(FUNCTIONS_DIR, ['chat_no_such_function'])).rejects.toThrow(/write the function/);
    await expect(functionMigrationSql(FUNCTIONS_DIR, ['../schema'])).rejects.toThrow(/not a SQL function name/);
  });
});
