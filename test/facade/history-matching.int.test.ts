import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientViewOf, type StoredItem } from '../../src/core/facade/client-view';
import type { ClientHistoryStore, ClientMessage } from '../../src/core/ports';
import { matchHistory } from '../../src/core/facade/match-history';
import { reconcileHistory } from '../../src/core/facade/reconcile-history';
import { candidatesOf, type ChatCompletionDeps } from '../../src/core/facade/start-chat-completion';
import { chainHashes } from '../../src/db/client-prefix-hash';
import { createFacadeConversationRepository } from '../../src/db/facade-conversation-repository';
import { createMemoryControlsRepository } from '../../src/db/memory-controls-repository';
import { createDatabase, type Database } from '../../src/db/prisma-client';
import { createThreadRepository } from '../../src/db/thread-repository';
import { createTestDatabase } from '../support/databases';

// The /v1 route's history matching on Postgres: the chain hashes the database writes (triggers of migration
// client_prefix_hash) equal the ones the route computes, a request reads the same few messages however long its
// history, and the plan is the one a comparison with the whole transcript gives.

let database: { url: string; drop(): Promise<void> };
let db: Database;

beforeAll(async () => {
  database = await createTestDatabase('history_matching', { migrated: true });
  db = createDatabase({ url: database.url, poolSize: 2 });
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const CLIENT_TOOLS = [{ type: 'function', function: { name: 'get_weather', description: 'w', parameters: {} } }];

interface Row {
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string;
  status?: string;
  toolCalls?: { id: string; name: string; args: Record<string, unknown> }[];
  toolCallId?: string;
  deleted?: boolean;
  superseded?: boolean;
  /** Rows of one turn share it (a client tool's result is recognised in its call's turn). */
  turn?: number;
}

/** A thread of the given rows (seq 1..n, inserted in one statement: the trigger chains each from the one before). */
async function threadOf(rows: readonly Row[]): Promise<string> {
  const ownerId = `user-${randomUUID()}`;
  const threadId = randomUUID();
  await db.$executeRaw`INSERT INTO users (id) VALUES (${ownerId})`;
  const settings = JSON.stringify({ openaiClient: { instructions: null, tools: CLIENT_TOOLS } });
  await db.$executeRaw`
    INSERT INTO threads (id, owner_id, last_seq, settings) VALUES (${threadId}::uuid, ${ownerId}, ${rows.length}::int, ${settings}::jsonb)`;
  const turns = new Map<number, string>();
  const json = JSON.stringify(
    rows.map((row, index) => {
      const turn = row.turn ?? index;
      if (!turns.has(turn)) turns.set(turn, randomUUID());
      return {
        seq: index + 1,
        role: row.role,
        content: row.content,
        status: row.status ?? 'complete',
        tool_calls: row.toolCalls ?? null,
        tool_call_id: row.toolCallId ?? null,
        deleted: row.deleted ?? false,
        superseded: row.superseded ?? false,
        turn_id: turns.get(turn),
      };
    }),
  );
  await db.$executeRaw`
    INSERT INTO messages (id, thread_id, seq, role, content, status, tool_calls, tool_call_id, deleted_at, superseded, turn_id)
    SELECT gen_random_uuid(), ${threadId}::uuid, r.seq, r.role, r.content, r.status, r.tool_calls, r.tool_call_id,
      CASE WHEN r.deleted THEN now() END, r.superseded, r.turn_id
    FROM jsonb_to_recordset(${json}::jsonb) AS r(seq int, role text, content text, status text, tool_calls jsonb,
      tool_call_id text, deleted boolean, superseded boolean, turn_id uuid)
    ORDER BY r.seq`;
  return threadId;
}

/** A chat of `pairs` user/assistant exchanges. */
function chatRows(pairs: number): Row[] {
  return Array.from({ length: pairs }, (_, index) => [
    { role: 'user' as const, content: `question ${index + 1}` },
    { role: 'assistant' as const, content: `answer ${index + 1}` },
  ]).flat();
}

/** The client's copy of a thread's view (what it received). */
function historyOf(view: readonly StoredItem[]): ClientMessage[] {
  return view.map((item): ClientMessage => {
    if (item.role === 'assistant')
      return {
        role: 'assistant',
        content: item.content,
        toolCalls: item.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: '{}' })),
      };
    if (item.role === 'tool') return { role: 'tool', toolCallId: item.toolCallId, content: item.content };
    return { role: 'user', content: item.content };
  });
}

async function fullViewOf(threadId: string): Promise<StoredItem[]> {
  const thread = await createThreadRepository(db).findThread(threadId, null);
  const messages = await createMemoryControlsRepository(db).listMessagesBySeq({
    threadId,
    fromSeq: 1,
    throughSeq: thread?.lastSeq ?? 0,
  });
  return clientViewOf(messages, { isClientCall: (name) => name === 'get_weather', clientResults: new Set() });
}

/** The history store with a count of the messages its reads return. */
function countingStore(): { store: ClientHistoryStore; read: { rows: number } } {
  const real = createFacadeConversationRepository(db).history;
  const read = { rows: 0 };
  return {
    read,
    store: {
      chainHashes: real.chainHashes,
      findPrefix: async (input) => {
        const hit = await real.findPrefix(input);
        read.rows += hit ? 1 : 0;
        return hit;
      },
      readRows: async (input) => {
        const rows = await real.readRows(input);
        read.rows += rows.length;
        return rows;
      },
      writing: async (threadId) => {
        const writing = await real.writing(threadId);
        read.rows += writing ? 1 : 0;
        return writing;
      },
      userAfter: async (input) => {
        const found = await real.userAfter(input);
        read.rows += found ? 1 : 0;
        return found;
      },
    },
  };
}

async function matchOnce(threadId: string, history: readonly ClientMessage[]) {
  const thread = await createThreadRepository(db).findThread(threadId, null);
  if (!thread) throw new Error('no thread');
  const { store, read } = countingStore();
  const plan = await matchHistory({ thread, client: history, budget: { remaining: 200 } }, store);
  return { plan, rows: read.rows };
}

describe('/v1 history matching by hashes', () => {
  it('the database chains a thread as the route chains the client history it came from', async () => {
    const threadId = await threadOf(chatRows(3));
    const history = historyOf(await fullViewOf(threadId));
    const stored = await db.$queryRaw<{ hash: Uint8Array }[]>`
      SELECT client_prefix_hash AS hash FROM messages WHERE thread_id = ${threadId}::uuid ORDER BY seq`;
    const computed = chainHashes({ messages: history, from: 0, base: null });
    expect(stored.map((row) => Buffer.from(row.hash).toString('hex'))).toEqual(
      computed.map((hash) => Buffer.from(hash).toString('hex')),
    );
  });

  it('hashes texts as the route compares them: line endings and surrounding white space do not count', async () => {
    const threadId = await threadOf([
      { role: 'user', content: '\u00a0\u3000 hello\r\nworld\r\t\ufeff' },
      { role: 'assistant', content: '\u2028answer\u205f' },
    ]);
    const stored = await db.$queryRaw<{ hash: Uint8Array }[]>`
      SELECT client_prefix_hash AS hash FROM messages WHERE thread_id = ${threadId}::uuid ORDER BY seq`;
    const client: ClientMessage[] = [
      { role: 'user', content: 'hello\nworld' },
      { role: 'assistant', content: 'answer', toolCalls: [] },
    ];
    const hex = (hashes: readonly Uint8Array[]) => hashes.map((hash) => Buffer.from(hash).toString('hex'));
    expect(hex(stored.map((row) => row.hash))).toEqual(hex(chainHashes({ messages: client, from: 0, base: null })));
    // Inner white space counts.
    const other = chainHashes({ messages: [{ role: 'user', content: 'hello\n world' }], from: 0, base: null });
    expect(hex(other)).not.toEqual(hex(stored.slice(0, 1).map((row) => row.hash)));
  });

  it('a request reads as many messages with a 1,000-message history as with a 10-message one', async () => {
    const reads: number[] = [];
    for (const pairs of [5, 500]) {
      const threadId = await threadOf(chatRows(pairs));
      const history: ClientMessage[] = [
        ...historyOf(await fullViewOf(threadId)),
        { role: 'user', content: 'one more' },
      ];
      const real = createFacadeConversationRepository(db);
      const { store, read } = countingStore();
      const memory = createMemoryControlsRepository(db);
      // Deps as the route passes them; a transcript read through the memory store counts too.
      const deps = {
        conversations: { ...real, threadsOf: async () => [{ threadId, lastTextTail: null }], history: store },
        threads: createThreadRepository(db),
        fork: {
          memory: {
            listMessagesBySeq: async (input: { threadId: string; fromSeq: number; throughSeq: number }) => {
              const rows = await memory.listMessagesBySeq(input);
              read.rows += rows.length;
              return rows;
            },
          },
        },
        serverToolNames: () => new Set<string>(),
      } as unknown as ChatCompletionDeps;
      const thread = await createThreadRepository(db).findThread(threadId, null);
      const candidates = await candidatesOf(
        { userId: thread?.ownerId ?? '', conversation: { key: 'id:x', explicit: true }, messages: history },
        deps,
      );
      expect(candidates.map((candidate) => candidate.plan)).toEqual([
        { kind: 'send', content: 'one more', matched: pairs * 2 },
      ]);
      reads.push(read.rows);
    }
    expect(reads[1]).toBe(reads[0]);
    expect(reads[0]).toBeLessThanOrEqual(4);
  });

  /** Answers with server-tool rounds, a notice, a stopped answer, client tools, a forgotten exchange, a regeneration. */
  const varied: Row[] = [
    { role: 'user', content: 'hello' },
    {
      role: 'assistant',
      content: 'Let me check',
      toolCalls: [{ id: 's1', name: 'calculator', args: {} }],
      turn: 1,
    },
    { role: 'tool', content: '4', toolCallId: 's1', turn: 1 },
    { role: 'assistant', content: 'It is 4.', turn: 1 },
    { role: 'system', content: 'a notice' },
    { role: 'user', content: '  tell a story\r\n' },
    { role: 'assistant', content: 'Once upon a time there was', status: 'cancelled' },
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'w1', name: 'get_weather', args: {} }], turn: 8 },
    { role: 'tool', content: 'rain', toolCallId: 'w1', turn: 8 },
    { role: 'assistant', content: 'It rains.', turn: 8 },
    { role: 'user', content: '', deleted: true },
    { role: 'assistant', content: '', deleted: true },
    { role: 'user', content: 'last question' },
    { role: 'assistant', content: 'old answer', superseded: true },
    { role: 'assistant', content: 'new answer' },
  ];

  /** Histories a client may send against a view: the whole, each prefix, each with a new message or an edit. */
  function historiesFor(view: readonly StoredItem[]): ClientMessage[][] {
    const whole = historyOf(view);
    const histories: ClientMessage[][] = [whole, [...whole, { role: 'user', content: 'next' }]];
    for (let length = 1; length < whole.length; length += 1) {
      const prefix = whole.slice(0, length);
      histories.push(prefix, [...prefix, { role: 'user', content: 'new' }]);
      const last = prefix.at(-1);
      if (last?.role === 'user') histories.push([...prefix.slice(0, -1), { role: 'user', content: 'edited' }]);
      if (last?.role === 'assistant')
        histories.push([...prefix.slice(0, -1), { ...last, content: 'changed' }, { role: 'user', content: 'x' }]);
    }
    // The stopped answer as the client kept it (shorter), then the rest: matched past it.
    const stopped = whole.map((message) =>
      message.role === 'assistant' && message.content.startsWith('Once upon')
        ? { ...message, content: 'Once upon a' }
        : message,
    );
    histories.push(stopped, [...stopped, { role: 'user', content: 'next' }], [{ role: 'user', content: 'hello\r\n' }]);
    return histories;
  }

  /** Each history's plan by hashes equals the plan from the whole view; returns the messages each read. */
  async function expectSamePlans(threadId: string, histories?: ClientMessage[][]): Promise<number[]> {
    const view = await fullViewOf(threadId);
    const reads: number[] = [];
    for (const history of histories ?? historiesFor(view)) {
      const { plan, rows } = await matchOnce(threadId, history);
      expect({ history, plan }).toEqual({ history, plan: reconcileHistory(history, view) });
      reads.push(rows);
    }
    return reads;
  }

  it('plans as a comparison with the whole transcript does', async () => {
    const threadId = await threadOf(varied);
    expect((await fullViewOf(threadId)).map((item) => item.content)).toEqual([
      'hello',
      'Let me check\n\nIt is 4.',
      '  tell a story\r\n',
      'Once upon a time there was',
      'weather?',
      '',
      'rain',
      'It rains.',
      'last question',
      'new answer',
    ]);
    const reads = await expectSamePlans(threadId);
    // The whole history and one more message: found by hash, the last answer read.
    expect(reads.slice(0, 2)).toEqual([2, 2]);
  });

  it('goes on past a stopped answer the client kept in part, by hash again after it', async () => {
    const threadId = await threadOf([...varied, ...chatRows(30)]);
    const view = await fullViewOf(threadId);
    const whole = historyOf(view).map((message) =>
      message.content.startsWith('Once upon') ? { ...message, content: 'Once upon a' } : message,
    );
    const reads = await expectSamePlans(threadId, [
      [...whole, { role: 'user', content: 'next' }],
      [...whole.slice(0, -3), { role: 'user', content: 'edited' }],
    ]);
    expect(Math.max(...reads)).toBeLessThan(30);
  });

  it('a message forgotten or superseded later re-chains the messages after it', async () => {
    const threadId = await threadOf(varied);
    const before = historiesFor(await fullViewOf(threadId));
    await db.$executeRaw`
      UPDATE messages SET content = '', deleted_at = now() WHERE thread_id = ${threadId}::uuid AND seq IN (8, 9, 10, 11)`;
    await db.$executeRaw`UPDATE messages SET superseded = true WHERE thread_id = ${threadId}::uuid AND seq = 16`;
    await db.$executeRaw`UPDATE messages SET superseded = false WHERE thread_id = ${threadId}::uuid AND seq = 15`;
    await expectSamePlans(threadId);
    // Histories a client kept from before: they part where the thread changed.
    await expectSamePlans(threadId, before);
  });

  /**
   * Saved memories' notes: in an answer with a server-tool round (#4), joining an answer closed by a client tool's call
   * (#10), and notes a client never sees: one of another turn (#6), one after the client tool's result (#12).
   */
  const noted: Row[] = [
    { role: 'user', content: 'Remember: I am vegetarian.' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'm1', name: 'save_memory', args: {} }], turn: 1 },
    { role: 'tool', content: 'saved', toolCallId: 'm1', turn: 1 },
    { role: 'system', content: '[memory] Saved to your memories: "I am vegetarian."', turn: 1 },
    { role: 'assistant', content: 'Noted.', turn: 1 },
    { role: 'system', content: '[memory] Saved to your memories: "not this turn"', turn: 99 },
    { role: 'user', content: 'Remember: I live in Oslo. Weather?' },
    {
      role: 'assistant',
      content: 'Checking.',
      toolCalls: [
        { id: 'm2', name: 'save_memory', args: {} },
        { id: 'w1', name: 'get_weather', args: {} },
      ],
      turn: 7,
    },
    { role: 'tool', content: 'saved', toolCallId: 'm2', turn: 7 },
    { role: 'system', content: '[memory] Saved to your memories: "I live in Oslo."', turn: 7 },
    { role: 'tool', content: 'rain', toolCallId: 'w1', turn: 7 },
    { role: 'system', content: '[memory] Saved to your memories: "after the result"', turn: 7 },
    { role: 'assistant', content: 'It rains.' },
  ];

  it("hashes an answer with a saved memory's note as the client got it: found by hash, as planned on the whole", async () => {
    const threadId = await threadOf(noted);
    expect((await fullViewOf(threadId)).map((item) => [item.content, item.lastSeq])).toEqual([
      ['Remember: I am vegetarian.', 1],
      ['[memory] Saved to your memories: "I am vegetarian."\n\nNoted.', 5],
      ['Remember: I live in Oslo. Weather?', 7],
      ['Checking.\n\n[memory] Saved to your memories: "I live in Oslo."', 10],
      ['rain', 11],
      ['It rains.', 13],
    ]);
    const reads = await expectSamePlans(threadId);
    // The whole history and one more message: found by hash, the last answer read.
    expect(reads.slice(0, 2)).toEqual([2, 2]);
    // Thirty exchanges after each noted answer: still found by hash, not read through.
    const longer = await threadOf([...noted.slice(0, 6), ...chatRows(30), ...noted.slice(6), ...chatRows(30)]);
    const history = historyOf(await fullViewOf(longer));
    const longReads = await expectSamePlans(longer, [
      [...history, { role: 'user', content: 'next' }],
      [...history.slice(0, -2), { role: 'user', content: 'edited' }],
    ]);
    expect(Math.max(...longReads)).toBeLessThan(10);
  });

  it('the migration memory_note_client_view recomputes the chains of threads with notes as the triggers write them', async () => {
    const threadId = await threadOf([...varied, ...noted]);
    const state = () => db.$queryRaw<{ seq: number; hash: string | null; chain: string | null; from: number | null }[]>`
      SELECT seq, encode(client_prefix_hash, 'hex') AS hash, encode(client_chain, 'hex') AS chain, client_answer_from AS from
      FROM messages WHERE thread_id = ${threadId}::uuid ORDER BY seq`;
    const written = await state();
    // As the earlier triggers left them: wrong from the first note on (here cleared).
    await db.$executeRaw`
      UPDATE messages SET client_prefix_hash = NULL, client_chain = NULL, client_answer_from = NULL
      WHERE thread_id = ${threadId}::uuid AND seq >= ${varied.length + 4}::int`;
    const migrations = path.resolve(import.meta.dirname, '../../prisma/migrations');
    const folder = readdirSync(migrations).find((name) => name.endsWith('_memory_note_client_view'));
    const sql = readFileSync(path.join(migrations, folder ?? '', 'migration.sql'), 'utf8');
    await db.$executeRawUnsafe(sql.slice(sql.lastIndexOf('DO $$')));
    expect(await state()).toEqual(written);
    expect(written.filter((row) => row.hash !== null)).toHaveLength(11 + 9);
  });

  it('forgetting a middle part of an answer re-chains its last part and what follows: still found by hash', async () => {
    const rounds: Row[] = [
      { role: 'user', content: 'what is 2+2+4?' },
      { role: 'assistant', content: 'First 2+2.', toolCalls: [{ id: 's1', name: 'calculator', args: {} }], turn: 1 },
      { role: 'tool', content: '4', toolCallId: 's1', turn: 1 },
      { role: 'assistant', content: 'Then 4+4.', toolCalls: [{ id: 's2', name: 'calculator', args: {} }], turn: 1 },
      { role: 'tool', content: '8', toolCallId: 's2', turn: 1 },
      { role: 'assistant', content: 'It is 8.', turn: 1 },
    ];
    const threadId = await threadOf([...rounds, ...chatRows(30)]);
    await db.$executeRaw`
      UPDATE messages SET content = '', deleted_at = now() WHERE thread_id = ${threadId}::uuid AND seq = 4`;
    const history = historyOf(await fullViewOf(threadId));
    expect(history[1]).toMatchObject({ content: 'First 2+2.\n\nIt is 8.' });
    const reads = await expectSamePlans(threadId, [[...history, { role: 'user', content: 'next' }]]);
    expect(reads).toEqual([2]);
    // The migration client_view_forgotten_answer_part re-chains such threads as the trigger now does.
    const state = () => db.$queryRaw<{ seq: number; hash: string | null; chain: string | null; from: number | null }[]>`
      SELECT seq, encode(client_prefix_hash, 'hex') AS hash, encode(client_chain, 'hex') AS chain, client_answer_from AS from
      FROM messages WHERE thread_id = ${threadId}::uuid ORDER BY seq`;
    const written = await state();
    await db.$executeRaw`
      UPDATE messages SET client_prefix_hash = NULL, client_chain = NULL, client_answer_from = NULL
      WHERE thread_id = ${threadId}::uuid AND seq >= 5`;
    const migrations = path.resolve(import.meta.dirname, '../../prisma/migrations');
    const folder = readdirSync(migrations).find((name) => name.endsWith('_client_view_forgotten_answer_part'));
    const sql = readFileSync(path.join(migrations, folder ?? '', 'migration.sql'), 'utf8');
    await db.$executeRawUnsafe(sql.slice(sql.lastIndexOf('DO $$')));
    expect(await state()).toEqual(written);
  });

  it('the migration fills in the chain of messages stored before it as the triggers write it', async () => {
    const threadId = await threadOf(varied);
    const state = () => db.$queryRaw<{ seq: number; hash: string | null; chain: string | null; from: number | null }[]>`
      SELECT seq, encode(client_prefix_hash, 'hex') AS hash, encode(client_chain, 'hex') AS chain, client_answer_from AS from
      FROM messages WHERE thread_id = ${threadId}::uuid ORDER BY seq`;
    const written = await state();
    await db.$executeRaw`
      UPDATE messages SET client_prefix_hash = NULL, client_chain = NULL, client_answer_from = NULL
      WHERE thread_id = ${threadId}::uuid`;
    const migrations = path.resolve(import.meta.dirname, '../../prisma/migrations');
    const folder = readdirSync(migrations).find((name) => name.endsWith('_client_prefix_hash'));
    const sql = readFileSync(path.join(migrations, folder ?? '', 'migration.sql'), 'utf8');
    const backfill = sql.slice(sql.lastIndexOf('DO $$'));
    await db.$executeRawUnsafe(backfill);
    expect(await state()).toEqual(written);
    expect(written.filter((row) => row.hash !== null)).toHaveLength(11);
  });
});
