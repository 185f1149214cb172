import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { MessageDto, SavedMemoryDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { waitFor } from '../support/wait-for';
import { adminToken, jobsNaming, memoryKit, query } from './memory-test-kit';

/**
 * The rule of every table without a column naming the user or one of their threads. A table added to the schema
 * with neither and without a rule here fails the erasure test: its rule must be decided and declared.
 */
const TABLES_WITHOUT_USER_COLUMN: Record<string, string> = {
  system_prefixes: "the deployment's system prompts, shared by every user: no user content",
  search_settings: "the deployment's text search configuration (one row)",
  _prisma_migrations: "the schema's migration history",
  spend_groups: 'named groups of users; their members are in spend_group_members (user_id)',
  spend_accounts:
    "named `user:<id>` or `address:<key>`: the user's is deleted by erasure (test/spend/spend-limits.int.test.ts)",
  spend_days:
    "named `user:<id>` or `address:<key>`: the user's are deleted by erasure (test/spend/spend-limits.int.test.ts)",
};

/** Columns that name a user, and columns that name a thread. */
const USER_COLUMNS = ['owner_id', 'user_id'];
const THREAD_COLUMNS = ['thread_id', 'source_thread_id', 'forked_from_thread_id'];

interface Column {
  table: string;
  column: string;
}

describe('erasure: DELETE /api/me and DELETE /api/admin/users/:userId leave nothing of the user', () => {
  const server = useChatServer({ env: { SUMMARY_TRIGGER: 'messages=4', SUMMARY_KEEP: 'messages=2' } });

  /** A user with threads, a fork, a summary, saved memories, model calls, rate-limit keys and a socket. */
  async function populatedUser(token: string) {
    const kit = memoryKit(server.app, token);
    const thread = await kit.createThread('to erase');
    for (let turn = 1; turn <= 3; turn += 1)
      await kit.send(thread.id, `Erase-me detail ${turn}: the boat is called Nimbus-${turn}.`);
    await kit.waitForFoldThrough(thread.id, 2);
    const messages = await kit.transcript(thread.id);
    const forked = await server.app.api(`/api/threads/${thread.id}/fork`, {
      method: 'POST',
      token,
      json: { atMessageId: (messages[1] as MessageDto).id },
    });
    expect(forked.status).toBe(201);
    const saved = await server.app.api('/api/memory', {
      method: 'POST',
      token,
      json: { text: 'The user is called Erasmus.' },
    });
    expect(saved.status).toBe(201);
    expect((await server.app.api(`/api/search?q=Nimbus`, { token })).status).toBe(200);
    const threadIds = (await query<{ id: string }>(server.app, 'SELECT id::text FROM threads')).map((row) => row.id);
    return { thread, threadIds, memory: (await saved.json()) as SavedMemoryDto };
  }

  async function schemaColumns(): Promise<{ tables: string[]; columns: Column[] }> {
    const tables = (
      await query<{ table: string }>(
        server.app,
        `SELECT table_name AS table FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
      )
    ).map((row) => row.table);
    const columns = await query<Column>(
      server.app,
      `SELECT table_name AS table, column_name AS column FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    return { tables, columns };
  }

  /** Every row of every table that still names the user or one of their threads (the tombstone excepted). */
  async function leftovers(userId: string, threadIds: string[]): Promise<string[]> {
    const { tables, columns } = await schemaColumns();
    const found: string[] = [];
    for (const table of tables) {
      const own = columns.filter((column) => column.table === table);
      const userColumns = own.filter(
        (column) => USER_COLUMNS.includes(column.column) || (table === 'users' && column.column === 'id'),
      );
      const threadColumns = own.filter(
        (column) => THREAD_COLUMNS.includes(column.column) || (table === 'threads' && column.column === 'id'),
      );
      if (userColumns.length === 0 && threadColumns.length === 0) {
        expect(
          TABLES_WITHOUT_USER_COLUMN[table],
          `table ${table} names neither a user nor a thread: declare its erasure rule in this test`,
        ).toBeDefined();
        continue;
      }
      for (const { column } of userColumns) {
        const rows = await query<{ n: number }>(
          server.app,
          `SELECT count(*)::int AS n FROM "${table}" WHERE "${column}" = $1`,
          [userId],
        );
        // The tombstone is what erasure leaves on purpose: the user id and when.
        const allowed = table === 'erased_users' ? 1 : 0;
        if ((rows[0]?.n ?? 0) !== allowed) found.push(`${table}.${column}: ${rows[0]?.n}`);
      }
      for (const { column } of threadColumns) {
        if (table === 'audit_log') {
          // Audit rows keep who acted and when, with no content.
          const rows = await query<{ n: number }>(
            server.app,
            `SELECT count(*)::int AS n FROM audit_log WHERE thread_id = ANY($1::uuid[]) AND details <> '{}'::jsonb`,
            [threadIds],
          );
          if ((rows[0]?.n ?? 0) > 0) found.push(`audit_log with details: ${rows[0]?.n}`);
          continue;
        }
        const rows = await query<{ n: number }>(
          server.app,
          `SELECT count(*)::int AS n FROM "${table}" WHERE "${column}" = ANY($1::uuid[])`,
          [threadIds],
        );
        if ((rows[0]?.n ?? 0) > 0) found.push(`${table}.${column}: ${rows[0]?.n}`);
      }
    }
    return found;
  }

  async function redisKeysOf(userId: string): Promise<string[]> {
    const redis = new Redis(server.app.redisUrl);
    try {
      return (await redis.keys(`${server.app.prefix}:*`)).filter((key) => key.endsWith(`:${userId}`));
    } finally {
      redis.disconnect();
    }
  }

  it('DELETE /api/me answers 204: every table is free of the user, sockets close, old tokens are refused, a guest never comes back, others are untouched', async () => {
    const other = await server.guest();
    const otherKit = memoryKit(server.app, other.token);
    const otherThread = await otherKit.createThread('stays');
    await otherKit.send(otherThread.id, 'I stay.');
    expect(
      (await server.app.api('/api/memory', { method: 'POST', token: other.token, json: { text: 'Other user item.' } }))
        .status,
    ).toBe(201);

    const { userId, token } = await server.guest();
    const before = new Set(
      (await query<{ id: string }>(server.app, 'SELECT id::text FROM threads')).map((row) => row.id),
    );
    await populatedUser(token);
    const threadIds = (
      await query<{ id: string }>(server.app, 'SELECT id::text FROM threads WHERE owner_id = $1', [userId])
    ).map((row) => row.id);
    expect(threadIds.length).toBe(2);
    expect([...before].some((id) => threadIds.includes(id))).toBe(false);
    expect(await redisKeysOf(userId)).not.toEqual([]);
    // The check sees the user's rows while they exist (so it can fail).
    const present = (await leftovers(userId, threadIds)).map((line) => line.split(':')[0]);
    for (const table of [
      'users.id',
      'threads.owner_id',
      'messages.thread_id',
      'context_entries.thread_id',
      'summary_revisions.thread_id',
      'model_calls.thread_id',
      'model_calls.user_id',
      'turns.thread_id',
      'saved_memories.user_id',
      'threads.forked_from_thread_id',
    ]) {
      expect(present).toContain(table);
    }
    const tab = await server.openTab(token);
    const disconnected = new Promise<void>((resolve) => tab.socket.once('disconnect', () => resolve()));

    const erased = await server.app.api('/api/me', { method: 'DELETE', token });
    expect(erased.status).toBe(204);
    await disconnected;

    expect(await leftovers(userId, threadIds)).toEqual([]);
    expect(await redisKeysOf(userId)).toEqual([]);
    // The old token is refused everywhere, and a guest is never recreated.
    for (const path of ['/api/threads', '/api/memory', `/api/threads/${threadIds[0]}`]) {
      expect((await server.app.api(path, { token })).status).toBe(401);
    }
    const newerGuestToken = await server.app.application.deps.tokens.sign({ userId, kind: 'guest' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await server.app.api('/api/threads', { token: newerGuestToken })).status).toBe(401);
    expect((await query(server.app, 'SELECT 1 FROM users WHERE id = $1', [userId])).length).toBe(0);

    // The other user is untouched.
    expect((await otherKit.transcript(otherThread.id)).length).toBeGreaterThan(0);
    expect(
      ((await (await server.app.api('/api/memory', { token: other.token })).json()) as { items: unknown[] }).items,
    ).toHaveLength(1);
  });

  it('DELETE /api/admin/users/:userId erases a host-minted user, audited without content; a token issued after it starts an empty account', async () => {
    const userId = `host-user-${Date.now()}`;
    const token = await server.app.application.deps.tokens.sign({ userId, kind: 'external' });
    const { threadIds } = await populatedUser(token).then(async (made) => ({
      ...made,
      threadIds: (
        await query<{ id: string }>(server.app, 'SELECT id::text FROM threads WHERE owner_id = $1', [userId])
      ).map((row) => row.id),
    }));
    const admin = await adminToken(server.app);
    const erased = await server.app.api(`/api/admin/users/${encodeURIComponent(userId)}`, {
      method: 'DELETE',
      token: admin,
    });
    expect(erased.status).toBe(204);
    expect(await leftovers(userId, threadIds)).toEqual([]);
    const audit = await query<{ actor: string; details: Record<string, unknown> }>(
      server.app,
      `SELECT actor, details FROM audit_log WHERE action = 'user.erased'`,
    );
    expect(audit).toEqual([{ actor: 'admin-1', details: { userId } }]);
    expect((await server.app.api('/api/threads', { token })).status).toBe(401);

    // JWT iat has seconds: a token issued in a later second brings the user back, empty.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const later = await server.app.application.deps.tokens.sign({ userId, kind: 'external' });
    await waitFor(async () => (await server.app.api('/api/threads', { token: later })).status === 200, {
      timeoutMs: 5000,
      what: 'the newer token',
    });
    const threads = (await (await server.app.api('/api/threads', { token: later })).json()) as { threads: unknown[] };
    expect(threads.threads).toEqual([]);
    expect(
      (await server.app.api('/api/threads', { method: 'POST', token: later, json: { title: 'fresh start' } })).status,
    ).toBe(201);
  });

  it("erasure removes the user's queued and finished jobs (folds, idle folds, tool runs and polls), and only theirs", async () => {
    const other = await server.guest();
    const otherThread = await memoryKit(server.app, other.token).createThread('keeps its jobs');
    await memoryKit(server.app, other.token).send(otherThread.id, 'My idle fold stays scheduled.');
    const { userId, token } = await server.guest();
    const { thread } = await populatedUser(token);
    const threadIds = (
      await query<{ id: string }>(server.app, 'SELECT id::text FROM threads WHERE owner_id = $1', [userId])
    ).map((row) => row.id);
    // A finished tool run whose next poll is still delayed (a background task's), as a runner's tool leaves it.
    const message = (await memoryKit(server.app, token).transcript(thread.id)).find(
      (each) => each.role === 'assistant',
    ) as MessageDto;
    const [run] = await query<{ id: string }>(
      server.app,
      `INSERT INTO tool_runs (id, thread_id, message_id, tool_call_id, name, args, status, started_at_seq)
      VALUES (gen_random_uuid(), $1, $2, 'call-erase', 'analyze_thread', '{}', 'succeeded', 1) RETURNING id::text`,
      [thread.id, message.id],
    );
    const runIds = [(run as { id: string }).id];
    await server.app.application.toolQueue.enqueuePoll(runIds[0] as string, 3_600_000);
    // The check sees them while they exist: completed folds, the threads' delayed idle folds, the delayed poll.
    await waitFor(
      async () => (await jobsNaming(server.app, threadIds, runIds)).some((job) => job.includes(':completed')),
      { timeoutMs: 10_000, what: 'a finished fold' },
    );
    const present = await jobsNaming(server.app, threadIds, runIds);
    expect(present).toEqual(
      expect.arrayContaining([
        'summary:idle-fold:delayed',
        'tools:poll:delayed',
        expect.stringMatching(/^summary:fold:completed$/),
      ]),
    );
    const othersBefore = await jobsNaming(server.app, [otherThread.id], []);
    expect(othersBefore).toContain('summary:idle-fold:delayed');

    const keysNaming = async () => {
      const redis = new Redis(server.app.redisUrl);
      try {
        return (await redis.keys(`${server.app.prefix}:*`)).filter((key) =>
          [...threadIds, ...runIds].some((id) => key.includes(id)),
        );
      } finally {
        redis.disconnect();
      }
    };
    // BullMQ's deduplication keys name them too (`…:de:idle-fold-<threadId>`).
    expect(await keysNaming()).not.toEqual([]);

    // BullMQ's events streams (`<prefix>:<queue>:events`), read as a client of the queues would with XRANGE.
    const eventsNaming = async () => {
      const redis = new Redis(server.app.redisUrl);
      try {
        const streams = await redis.keys(`${server.app.prefix}:*:events`);
        expect(streams.length).toBeGreaterThan(0);
        const entries = (await Promise.all(streams.map((stream) => redis.xrange(stream, '-', '+')))).flat();
        return entries
          .map(([, fields]) => fields.join(' '))
          .filter((line) => [...threadIds, ...runIds].some((id) => line.includes(id)));
      } finally {
        redis.disconnect();
      }
    };
    expect(await eventsNaming()).not.toEqual([]);

    expect((await server.app.api('/api/me', { method: 'DELETE', token })).status).toBe(204);
    expect(await jobsNaming(server.app, threadIds, runIds)).toEqual([]);
    expect(await keysNaming()).toEqual([]);
    expect(await eventsNaming()).toEqual([]);
    expect(await jobsNaming(server.app, [otherThread.id], [])).toEqual(othersBefore);
  });

  it('GET /api/me/export streams NDJSON: each thread in the thread export format, then the saved memories, then an end line', async () => {
    const { token } = await server.guest();
    const { thread, memory } = await populatedUser(token);
    const response = await server.app.api('/api/me/export', { token });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = (await response.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string } & Record<string, unknown>);
    const threads = lines.filter((line) => line.type === 'thread');
    expect(threads).toHaveLength(2);
    const original = threads.find((line) => (line.thread as { id: string }).id === thread.id) as unknown as {
      format: string;
      messages: MessageDto[];
      summaryRevisions: unknown[];
    };
    expect(original.format).toBe('chat-thread-export');
    expect(original.messages.some((message) => message.content.includes('Nimbus-1'))).toBe(true);
    expect(original.summaryRevisions.length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.type === 'saved-memory')).toEqual([
      expect.objectContaining({ id: memory.id, text: 'The user is called Erasmus.' }),
    ]);
    expect(lines.at(-1)).toEqual({ type: 'end', threads: 2, savedMemories: 1 });
  });
});
