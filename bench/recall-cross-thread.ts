/**
 * bench:recall's cross-thread mode (issue 27): memory across a user's chats, measured on LoCoMo.
 *
 * Each conversation is one user; each of its sessions is a chat of its own (a new chat per day, as people use chat
 * products), seeded into the store's tables (the search index is written by the store's trigger), its messages
 * dated at the session's date. Each question is then asked as the first message of a new chat of that user (a
 * thread whose transcript and window hold only the question; the deployment's default recall scope, `user`):
 * - recall@k of the cross-thread ranking (`searchElsewhere`, the ranking auto-recall and search_transcript use for
 *   the user's other chats): an evidence turn among the first k ranked messages;
 * - whether an evidence turn is verbatim in the new chat's pack (the context read with auto-recall and the pack
 *   built from it: what the model receives), and, as a check, in the pack of the same chat with recallScope
 *   `thread` (nothing crosses: expected 0);
 * - search speed: a user's 50 chats of 500 messages each (seeded by SQL), `searchElsewhere` from a new chat of
 *   that user, and the whole context read with cross-thread auto-recall beside it.
 */
import type pg from 'pg';
import type { ContextSettings } from '../src/core/thread-context/context-settings';
import { buildTurnPack } from '../src/core/turn/stream-answer';
import { loadThreadContext } from '../src/db/load-thread-context';
import type { Database } from '../src/db/prisma-client';
import { createSearchRepository } from '../src/db/search-repository';
import { elsewhereRankedSql } from '../src/db/search-sql';
import { Prisma } from '../src/db/generated/client';
import { line, type Conversation, type Turn } from './support/locomo';
import { quantile } from './support/stats';
import type { OpenAIFunctionTool } from '../src/core/context/types';

/** The speed figure's user: SPEED_THREADS chats of SPEED_MESSAGES messages each. */
const SPEED_THREADS = 50;
const SPEED_MESSAGES = 500;
const WARM_UP_SEARCHES = 20;

export interface CrossThreadOptions {
  db: Database;
  client: pg.Client;
  settings: ContextSettings;
  tools: readonly OpenAIFunctionTool[];
  /** Packs are measured on every packEvery-th question (1: all). */
  packEvery: number;
  /** Timed searches on the 50 × 500 user (after WARM_UP_SEARCHES). */
  speedSearches: number;
  log: (message: string) => void;
}

interface Tally {
  questions: number;
  at5: number;
  at10: number;
  at20: number;
  packQuestions: number;
  packUser: number;
  packThread: number;
  recalledElsewhere: number;
}

export interface CrossThreadRun {
  users: number;
  chats: number;
  tally: Tally;
  byCategory: Map<number, { questions: number; at10: number }>;
  speed: { threads: number; messages: number; search: number[]; contextRead: number[]; inPostgres: number[] };
}

/** The user's chats, one per session, their messages at the session's date (a second apart, in order). */
async function seedChat(
  client: pg.Client,
  input: { ownerId: string; threadId: string; title: string; turns: readonly Turn[] },
): Promise<void> {
  const { turns } = input;
  const first = turns[0]?.at ?? new Date(0);
  const last = turns.at(-1)?.at ?? first;
  await client.query(
    `INSERT INTO threads (id, owner_id, title, last_seq, created_at, updated_at, last_activity_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
    [input.threadId, input.ownerId, input.title, turns.length, first, new Date(last.getTime() + turns.length * 1000)],
  );
  await client.query(
    `
    INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, created_at, updated_at, completed_at)
    SELECT gen_random_uuid(), $1::uuid, s, r, c, 'complete', greatest(length(c) / 4, 1), 'o200k_base', a, a, a
    FROM unnest($2::int[], $3::text[], $4::text[], $5::timestamptz[]) AS t(s, r, c, a)`,
    [
      input.threadId,
      turns.map((_, index) => index + 1),
      turns.map((turn) => turn.role),
      turns.map((turn) => turn.content),
      turns.map((turn, index) => new Date(turn.at.getTime() + index * 1000)),
    ],
  );
}

/** A new chat of `ownerId` whose first message (transcript and window) is `question`. */
async function askInNewChat(
  client: pg.Client,
  settings: ContextSettings,
  ownerId: string,
  question: string,
): Promise<string> {
  const threadId = crypto.randomUUID();
  await client.query(`INSERT INTO threads (id, owner_id, title, last_seq) VALUES ($1, $2, 'New chat', 1)`, [
    threadId,
    ownerId,
  ]);
  await client.query(
    `
    INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, completed_at)
    VALUES (gen_random_uuid(), $1, 1, 'user', $2, 'complete', greatest(length($2) / 4, 1), 'o200k_base', now())`,
    [threadId, question],
  );
  await client.query(
    `INSERT INTO context_entries (thread_id, seq, role, content, tokens, encoding) VALUES ($1, 1, 'user', $2, $3, $4)`,
    [threadId, question, settings.counter.countMessage({ role: 'user', content: question }), settings.counter.encoding],
  );
  return threadId;
}

export async function measureCrossThread(
  options: CrossThreadOptions,
  conversations: readonly Conversation[],
): Promise<CrossThreadRun> {
  const { db, client, settings } = options;
  const search = createSearchRepository(db);
  const tally: Tally = {
    questions: 0,
    at5: 0,
    at10: 0,
    at20: 0,
    packQuestions: 0,
    packUser: 0,
    packThread: 0,
    recalledElsewhere: 0,
  };
  const byCategory = new Map<number, { questions: number; at10: number }>();
  let chats = 0;
  const read = (threadId: string, recallScope: 'thread' | 'user') =>
    loadThreadContext(db, threadId, {
      recall: true,
      recallTokens: settings.recallTokens,
      userMemoryTokens: settings.userMemoryTokens,
      recallScope,
    });

  const seeded: { conversation: Conversation; ownerId: string; where: Map<string, string> }[] = [];
  for (const conversation of conversations) {
    const ownerId = `bench-cross-${conversation.id}`;
    await client.query(`INSERT INTO users (id, kind) VALUES ($1, 'guest')`, [ownerId]);
    const where = new Map<string, string>(); // dia_id -> `${threadId}#${seq}`
    const sessions = [...new Set(conversation.turns.map((turn) => turn.session))];
    for (const session of sessions) {
      const turns = conversation.turns.filter((turn) => turn.session === session);
      const threadId = crypto.randomUUID();
      await seedChat(client, {
        ownerId,
        threadId,
        title: `Chat of ${turns[0]?.at.toISOString().slice(0, 10) ?? 'a day'}`,
        turns,
      });
      turns.forEach((turn, index) => where.set(turn.diaId, `${threadId}#${index + 1}`));
      chats += 1;
    }
    seeded.push({ conversation, ownerId, where });
  }
  await client.query('ANALYZE');
  options.log(`cross-thread: ${conversations.length} users, ${chats} chats seeded`);

  for (const { conversation, ownerId, where } of seeded) {
    const textOf = new Map(conversation.turns.map((turn) => [turn.diaId, turn.content]));
    let found = 0;
    let asked = 0;
    for (const [index, question] of conversation.questions.entries()) {
      const evidence = new Set(question.evidence.flatMap((id) => where.get(id) ?? []));
      if (evidence.size === 0) continue;
      tally.questions += 1;
      asked += 1;
      const threadId = await askInNewChat(client, settings, ownerId, question.question);
      try {
        const ranked = await search.searchElsewhere({
          threadId,
          query: question.question,
          limit: 20,
          defaultScope: 'user',
        });
        const at = (k: number) => ranked.slice(0, k).some((match) => evidence.has(`${match.threadId}#${match.seq}`));
        if (at(5)) tally.at5 += 1;
        if (at(10)) {
          tally.at10 += 1;
          found += 1;
        }
        if (at(20)) tally.at20 += 1;
        const category = byCategory.get(question.category) ?? { questions: 0, at10: 0 };
        category.questions += 1;
        if (at(10)) category.at10 += 1;
        byCategory.set(question.category, category);
        if (index % options.packEvery !== 0) continue;

        const holds = (texts: readonly string[]) =>
          question.evidence.some((id) => texts.some((text) => text.includes(textOf.get(id) ?? '\u0000')));
        const userContext = await read(threadId, 'user');
        const threadContext = await read(threadId, 'thread');
        if (!userContext || !threadContext) throw new Error('the new chat vanished');
        const userPack = buildTurnPack(userContext, settings, options.tools).pack;
        const threadPack = buildTurnPack(threadContext, settings, options.tools).pack;
        tally.packQuestions += 1;
        tally.recalledElsewhere += userPack.manifest.recalledElsewhere.length;
        if (holds(userPack.messages.map((message) => message.content))) tally.packUser += 1;
        if (holds(threadPack.messages.map((message) => message.content))) tally.packThread += 1;
      } finally {
        await client.query('DELETE FROM threads WHERE id = $1', [threadId]);
      }
    }
    options.log(
      `cross-thread ${conversation.id}: ${asked} questions, recall@10 ${(found / Math.max(asked, 1)).toFixed(3)}`,
    );
  }

  const speed = await measureSpeed(options, conversations);
  return { users: conversations.length, chats, tally, byCategory, speed };
}

/**
 * A user with SPEED_THREADS chats of SPEED_MESSAGES messages (LoCoMo's turns, each chat starting further along
 * them), and a new chat of that user asking the questions: `searchElsewhere` (limit 10) timed per question, the
 * context read with cross-thread auto-recall beside it, and the ranking statement inside Postgres (EXPLAIN ANALYZE).
 */
async function measureSpeed(
  options: CrossThreadOptions,
  conversations: readonly Conversation[],
): Promise<CrossThreadRun['speed']> {
  const { db, client, settings } = options;
  const search = createSearchRepository(db);
  const all = conversations.flatMap((conversation) => conversation.turns);
  const ownerId = 'bench-cross-speed';
  await client.query(`INSERT INTO users (id, kind) VALUES ($1, 'guest')`, [ownerId]);
  const day = 24 * 3600 * 1000;
  for (let chat = 0; chat < SPEED_THREADS; chat += 1) {
    const turns = Array.from({ length: SPEED_MESSAGES }, (_, index) => {
      const turn = all[(chat * 997 + index) % all.length] as Turn;
      return { ...turn, at: new Date(Date.UTC(2024, 0, 1) + chat * day) };
    });
    await seedChat(client, { ownerId, threadId: crypto.randomUUID(), title: `Chat ${chat + 1}`, turns });
  }
  await client.query('ANALYZE');
  const questions = conversations.flatMap((conversation) => conversation.questions);
  const stride = Math.max(1, Math.floor(questions.length / (options.speedSearches + WARM_UP_SEARCHES)));
  const asked = questions.filter((_, index) => index % stride === 0).slice(0, options.speedSearches + WARM_UP_SEARCHES);
  const threadId = await askInNewChat(client, settings, ownerId, asked[0]?.question ?? '');
  const searchTimes: number[] = [];
  const contextRead: number[] = [];
  for (const [index, question] of asked.entries()) {
    await client.query(`UPDATE context_entries SET content = $2 WHERE thread_id = $1 AND seq = 1`, [
      threadId,
      question.question,
    ]);
    let started = performance.now();
    await search.searchElsewhere({ threadId, query: question.question, limit: 10, defaultScope: 'user' });
    const searched = performance.now() - started;
    started = performance.now();
    await loadThreadContext(db, threadId, {
      recall: true,
      recallTokens: settings.recallTokens,
      userMemoryTokens: settings.userMemoryTokens,
      recallScope: 'user',
    });
    const readTime = performance.now() - started;
    if (index < WARM_UP_SEARCHES) continue;
    searchTimes.push(searched);
    contextRead.push(readTime);
  }
  const inPostgres: number[] = [];
  for (const question of asked.slice(WARM_UP_SEARCHES, WARM_UP_SEARCHES + 50)) {
    const statement = elsewhereRankedSql({
      threadId: Prisma.sql`${threadId}::uuid`,
      query: Prisma.sql`${question.question}::text`,
      limit: Prisma.sql`${10}::int`,
    });
    const [plan] = await db.$queryRaw<
      { 'QUERY PLAN': [{ 'Execution Time': number }] }[]
    >`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`;
    const time = plan?.['QUERY PLAN'][0]['Execution Time'];
    if (time !== undefined) inPostgres.push(time);
  }
  options.log(
    `cross-thread speed: ${SPEED_THREADS} chats × ${SPEED_MESSAGES} messages, ${searchTimes.length} searches`,
  );
  return { threads: SPEED_THREADS, messages: SPEED_MESSAGES, search: searchTimes, contextRead, inPostgres };
}

const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

/** The cross-thread section of the printed table. */
export function crossThreadTable(run: CrossThreadRun): string[] {
  const { tally, speed } = run;
  const n = tally.questions;
  return [
    `cross-thread: ${run.users} users, one chat per LoCoMo session (${run.chats} chats), each question the first message of a new chat of its user`,
    line('cross-thread recall@5 (searchElsewhere, ranked messages)', tally.at5 / n),
    line('cross-thread recall@10', tally.at10 / n, { op: '>=', value: 0.75 }),
    line('cross-thread recall@20', tally.at20 / n),
    ...[...run.byCategory.entries()]
      .sort(([a], [b]) => a - b)
      .map(([category, figures]) =>
        line(
          `  recall@10, category ${category} ${CATEGORY_NAMES[category] ?? ''} (${figures.questions})`,
          figures.at10 / figures.questions,
        ),
      ),
    line(
      `evidence in the new chat's pack, recallScope user (${tally.packQuestions} q)`,
      tally.packUser / tally.packQuestions,
      { op: '>=', value: 0.7 },
      3,
      `${(tally.recalledElsewhere / Math.max(tally.packQuestions, 1)).toFixed(1)} messages of other chats per pack`,
    ),
    line(
      "evidence in the new chat's pack, recallScope thread",
      tally.packThread / tally.packQuestions,
      undefined,
      3,
      'nothing crosses: expected 0',
    ),
    line(
      `cross-thread search p50 ms, ${speed.threads} chats × ${speed.messages} messages (${speed.search.length} searches)`,
      quantile(speed.search, 0.5),
      undefined,
      2,
    ),
    line('cross-thread search p95 ms', quantile(speed.search, 0.95), { op: '<=', value: 25 }, 2),
    line(
      '  the ranking statement inside Postgres p50 ms',
      quantile(speed.inPostgres, 0.5),
      undefined,
      2,
      `p95 ${quantile(speed.inPostgres, 0.95).toFixed(2)} ms, EXPLAIN ANALYZE execution time, ${speed.inPostgres.length} searches`,
    ),
    line(
      '  context read with cross-thread auto-recall p50 ms',
      quantile(speed.contextRead, 0.5),
      undefined,
      2,
      `p95 ${quantile(speed.contextRead, 0.95).toFixed(2)} ms`,
    ),
  ];
}
