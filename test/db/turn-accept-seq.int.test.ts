import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/db/migrate';
import { createTestDatabase } from '../support/databases';

// Issue 33 item 7: migration turn_accept_seq numbers the turns a database already holds in their old queue order
// (created_at, id), and turns accepted after it come after them.

const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../prisma/migrations');
const ACCEPT_SEQ_MIGRATION = '20261127085454_turn_accept_seq';
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('migration turn_accept_seq', () => {
  it('numbers existing turns in (created_at, id) order, and new turns after them', async () => {
    const database = await createTestDatabase('accept_seq');
    cleanups.push(database.drop);
    const before = await mkdtemp(path.join(tmpdir(), 'migrations-before-'));
    cleanups.push(() => rm(before, { recursive: true, force: true }));
    for (const entry of await readdir(MIGRATIONS_DIR)) {
      if (entry < ACCEPT_SEQ_MIGRATION)
        await cp(path.join(MIGRATIONS_DIR, entry), path.join(before, entry), { recursive: true });
    }
    await applyMigrations({ databaseUrl: database.url, migrationsDir: before, log: silent });

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    cleanups.push(() => client.end());
    await client.query("INSERT INTO users (id) VALUES ('u1')");
    const thread = (
      await client.query<{ id: string }>(
        "INSERT INTO threads (id, owner_id) VALUES (gen_random_uuid(), 'u1') RETURNING id",
      )
    ).rows[0]!.id;
    // Inserted out of order: c is the newest, a and b share a millisecond (b's id sorts first).
    const turns: [string, string][] = [
      ['c', '00000000-0000-4000-8000-00000000000c'],
      ['a', '00000000-0000-4000-8000-00000000000b'],
      ['b', '00000000-0000-4000-8000-00000000000a'],
    ];
    const at: Record<string, string> = {
      a: '2026-01-01T00:00:00.000Z',
      b: '2026-01-01T00:00:00.000Z',
      c: '2026-01-02T00:00:00.000Z',
    };
    for (const [name, id] of turns)
      await client.query(
        "INSERT INTO turns (id, thread_id, kind, status, created_at) VALUES ($1, $2, 'message', 'complete', $3)",
        [id, thread, at[name]],
      );

    await applyMigrations({ databaseUrl: database.url, migrationsDir: MIGRATIONS_DIR, log: silent });
    await client.query(
      "INSERT INTO turns (id, thread_id, kind, created_at) VALUES ('00000000-0000-4000-8000-000000000001', $1, 'message', '2020-01-01')",
      [thread],
    );
    const { rows } = await client.query<{ id: string; accept_seq: string }>(
      'SELECT id, accept_seq FROM turns ORDER BY accept_seq',
    );
    const nameOf = new Map([
      ...turns.map(([name, id]) => [id, name] as const),
      ['00000000-0000-4000-8000-000000000001', 'new'],
    ]);
    // b before a: same millisecond, b's id sorts first; c, the newest, last of the old ones; then the new turn.
    expect(rows.map((row) => [nameOf.get(row.id), Number(row.accept_seq)])).toEqual([
      ['b', 1],
      ['a', 2],
      ['c', 3],
      ['new', 4],
    ]);
  });
});
