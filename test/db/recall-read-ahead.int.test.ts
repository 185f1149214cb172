import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadThreadContext, readRecallElsewhere, recheckRecallElsewhere } from '../../src/db/load-thread-context';
import { createMemoryControlsRepository } from '../../src/db/memory-controls-repository';
import { createDatabase, type Database } from '../../src/db/prisma-client';
import { Prisma } from '../../src/db/generated/client';
import { createThreadRepository } from '../../src/db/thread-repository';
import { createTurnRepository } from '../../src/db/turn-repository';
import { createMigratedTestDatabase } from '../support/databases';

// Cross-thread recall read ahead (src/db/recall-prefetch.ts): the other chats' ranking starts beside the accept of
// a message that runs at once, and the turn's start reads the rest of the context meanwhile. What the turn gets must
// be what its own read would have found; a message that waits behind another turn reads for itself.

const OWNER = 'read-ahead-user';
const READ = { recallTokens: 800, recallScope: 'user' as const, recallSticky: true };

type Turns = ReturnType<typeof createTurnRepository>;

/** The owner's message accepted on `threadId`. */
const send = (turns: Turns, threadId: string, content: string) =>
  turns.acceptUserMessage({
    threadId,
    ownerId: OWNER,
    content,
    tokens: 12,
    encoding: 'o200k_base',
    clientMessageId: null,
    maxQueued: 5,
  });

/** The thread's next turn started (its context read) and completed, starting nothing after it. */
async function runOne(turns: Turns, threadId: string) {
  const next = await turns.nextTurn({ threadId, owner: 'p', ttlMs: 30_000 });
  if (next.outcome !== 'started') throw new Error(`no turn started: ${next.outcome}`);
  await turns.completeTurn({ turnId: next.turn.id, threadId, owner: 'p', ttlMs: 30_000, startNext: false });
  return next;
}

describe('cross-thread recall read ahead of the turn', () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  /** The statements sent, in order: their first line of SQL after the prepared mark. */
  const sent: string[] = [];

  beforeAll(async () => {
    database = await createMigratedTestDatabase('read_ahead');
    db = createDatabase({ url: database.url, poolSize: 4 });
    const rows = db.sql.rows.bind(db.sql);
    Object.assign(db.sql, {
      rows: <T>(query: Prisma.Sql): Promise<T[]> => {
        sent.push(query.sql);
        return rows<T>(query);
      },
    });
  });
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  const ranksOtherChats = (sql: string) => sql.includes('corpus AS (');

  it("the turn's context has the other chats' matches read beside the accept, the same as its own read finds", async () => {
    const threads = createThreadRepository(db);
    const turns = createTurnRepository(db, READ);
    await threads.ensureUser(OWNER, 'guest');
    const papers = await threads.createThread({ ownerId: OWNER, maxThreads: 10 });
    const today = await threads.createThread({ ownerId: OWNER, maxThreads: 10 });
    await send(turns, papers.id, 'My passport number is C4R55T901, please keep it in mind.');
    await runOne(turns, papers.id);

    sent.length = 0;
    await send(turns, today.id, 'What is my passport number?');
    const started = await runOne(turns, today.id);
    // Read ahead: the ranking of the other chats was its own statement, and the turn's context read left it out.
    const contextRead = sent.find((sql) => sql.includes('prepared:thread_context'));
    expect(contextRead && ranksOtherChats(contextRead)).toBe(false);
    expect(sent.filter((sql) => sql.includes('prepared:recall_elsewhere'))).toHaveLength(1);
    const recalled = started.outcome === 'started' ? started.context.recalledElsewhere : undefined;
    expect(recalled?.map((message) => message.content)).toEqual([
      'My passport number is C4R55T901, please keep it in mind.',
    ]);
    expect(recalled?.[0]?.thread?.id).toBe(papers.id);

    // The same read done whole now finds the same messages, in the same order, with the same scores.
    const whole = await loadThreadContext(db, today.id, { recall: true, ...READ });
    expect(whole?.recalledElsewhere).toEqual(recalled);
  });

  it('a message that waits behind another turn of its thread reads the other chats when its turn starts', async () => {
    const threads = createThreadRepository(db);
    const turns = createTurnRepository(db, READ);
    const later = await threads.createThread({ ownerId: OWNER, maxThreads: 10 });
    await send(turns, later.id, 'Hello there.');
    const first = await turns.nextTurn({ threadId: later.id, owner: 'p', ttlMs: 30_000 });
    expect(first.outcome).toBe('started');
    // Accepted while the first turn runs: by the time it starts, the other chats may have changed.
    await send(turns, later.id, 'And my passport number?');
    sent.length = 0;
    if (first.outcome !== 'started') return;
    const done = await turns.completeTurn({ turnId: first.turn.id, threadId: later.id, owner: 'p', ttlMs: 30_000 });
    expect(done.next.outcome).toBe('started');
    const contextRead = sent.find((sql) => sql.includes('prepared:thread_context'));
    expect(contextRead && ranksOtherChats(contextRead)).toBe(true);
    const recalled = done.next.outcome === 'started' ? done.next.context.recalledElsewhere : undefined;
    expect(recalled?.map((message) => message.content)).toContain(
      'My passport number is C4R55T901, please keep it in mind.',
    );
  });

  it("bound to the thread's owner: another user's thread id reads no one's chats", async () => {
    const threads = createThreadRepository(db);
    const theirs = await threads.createThread({ ownerId: OWNER, maxThreads: 10 });
    const read = (ownerId: string) =>
      readRecallElsewhere(db, { threadId: theirs.id, ownerId, query: 'What is my passport number?', ...READ });
    expect((await read(OWNER))?.map((message) => message.content)).toContain(
      'My passport number is C4R55T901, please keep it in mind.',
    );
    expect(await read('intruder')).toBeNull();
  });

  it('a read that waited is checked again: a message forgotten since, or a thread set to its own scope, is left out', async () => {
    const threads = createThreadRepository(db);
    const turns = createTurnRepository(db, READ);
    const notes = await threads.createThread({ ownerId: OWNER, maxThreads: 10 });
    const asking = await threads.createThread({ ownerId: OWNER, maxThreads: 10 });
    const said = await send(turns, notes.id, 'The locker code is 4471, near the passport office.');
    await runOne(turns, notes.id);

    const found = await readRecallElsewhere(db, {
      threadId: asking.id,
      ownerId: OWNER,
      query: 'Where is the locker code and the passport?',
      ...READ,
    });
    const contents = (recalled: { content: string }[] | null | undefined) =>
      recalled?.map((message) => message.content);
    expect(contents(found)).toEqual(
      expect.arrayContaining([
        'The locker code is 4471, near the passport office.',
        'My passport number is C4R55T901, please keep it in mind.',
      ]),
    );
    const recheck = () => recheckRecallElsewhere(db, { threadId: asking.id, recalled: found ?? [], ...READ });
    expect(await recheck()).toEqual(found);

    await createMemoryControlsRepository(db).forget({ threadId: notes.id, messageIds: [said.message.id] });
    const after = await recheck();
    expect(contents(after)).not.toContain('The locker code is 4471, near the passport office.');
    expect(contents(after)).toContain('My passport number is C4R55T901, please keep it in mind.');
    expect(after).toHaveLength((found?.length ?? 0) - 1);

    await db.sql.run(
      Prisma.sql`UPDATE threads SET settings = '{"recallScope": "thread"}'::jsonb WHERE id = ${asking.id}::uuid`,
    );
    expect(await recheck()).toBeNull();
  });
});
