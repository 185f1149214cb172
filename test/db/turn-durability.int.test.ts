import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/prisma-client';
import { createThreadRepository } from '../../src/db/thread-repository';
import { createTurnRepository } from '../../src/db/turn-repository';
import { createMigratedTestDatabase } from '../support/databases';

// The durability rules of the turn's path (docs/scaling.md): an accepted message and a turn's end wait for the WAL
// flush; the lease and a turn's start do not. The functions that join those steps set synchronous_commit for their
// own transaction: each is run here in a transaction that is rolled back, and the setting it leaves is what its
// commit would have used.

describe('the turn functions commit as the durability rules say', () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createMigratedTestDatabase('durability');
    db = createDatabase({ url: database.url, poolSize: 2 });
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.$disconnect();
    await database?.drop();
  });

  /** The synchronous_commit a statement leaves for its transaction's commit (the statement itself is rolled back). */
  const commitModeAfter = async (sql: string, values: unknown[]) => {
    await client.query('BEGIN');
    try {
      await client.query(sql, values);
      return (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]
        ?.synchronous_commit;
    } finally {
      await client.query('ROLLBACK');
    }
  };

  it("a turn's start commits without the flush; its end waits for it, also when it starts the next turn", async () => {
    const threads = createThreadRepository(db);
    const turns = createTurnRepository(db, { recallTokens: 0 });
    await threads.ensureUser('durable-user', 'guest');
    const thread = await threads.createThread({ ownerId: 'durable-user', maxThreads: 10 });
    const send = (content: string) =>
      turns.acceptUserMessage({
        threadId: thread.id,
        ownerId: 'durable-user',
        content,
        tokens: 3,
        encoding: 'o200k_base',
        clientMessageId: null,
        maxQueued: 5,
      });
    const first = await send('first');
    await send('second');

    expect(await commitModeAfter('SELECT chat_next_turn($1::uuid, $2::text, $3::int)', [thread.id, 'p', 30_000])).toBe(
      'off',
    );
    const started = await turns.nextTurn({ threadId: thread.id, owner: 'p', ttlMs: 30_000 });
    expect(started).toMatchObject({ outcome: 'started', turn: { id: first.turn.id } });
    // Completing the first turn starts the second in the same transaction: the commit still waits for the flush.
    expect(
      await commitModeAfter('SELECT chat_complete_turn($1::uuid, $2::uuid, $3::text, $4::int, true)', [
        first.turn.id,
        thread.id,
        'p',
        30_000,
      ]),
    ).toBe('on');
    expect(
      await commitModeAfter(
        'SELECT chat_accept_user_message($1::uuid, $2::text, gen_random_uuid(), gen_random_uuid(), $3::text, 3, $4::text, NULL, 5)',
        [thread.id, 'durable-user', 'third', 'o200k_base'],
      ),
    ).toBe('on');
  });
});
