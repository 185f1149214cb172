/**
 * `npm run bench:recall`: transcript search and auto-recall measured on LoCoMo (Maharana et al., ACL 2024).
 * The data is CC BY-NC and never copied into the project: LOCOMO_PATH (default ../shared/data/locomo/locomo-dev.json,
 * resolved relative to the project root). Each conversation is loaded as one thread through the real store (a bulk
 * seed of the messages table: the search index is written by the store's trigger), speaker_a as `user`, speaker_b
 * as `assistant`, each text prefixed with the speaker's name and the session's date. Then, for every question of
 * categories 1–4: evidence recall@k of search_transcript's ranking; whether an evidence turn is verbatim in the pack
 * (ours with and without auto-recall, LangChain's summarizationMiddleware); and search latency.
 * BENCH_RECALL_MODE: `thread` (the above), `cross` (bench/recall-cross-thread.ts: each session a chat of its own, each
 * question asked in a new chat of the same user), `both` (the default).
 */
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { contextSettingsFromEnv } from '../src/app/context-settings-from-env';
import { loadEnv } from '../src/config/env';
import type { ContextSettings } from '../src/core/thread-context/context-settings';
import { createToolRegistry } from '../src/core/tools';
import { buildTurnPack } from '../src/core/turn/stream-answer';
import { loadThreadContext } from '../src/db/load-thread-context';
import { createDatabase, type Database } from '../src/db/prisma-client';
import { createSearchRepository, modelSearchSql } from '../src/db/search-repository';
import { deploymentTools } from '../src/tools';
import { startPostgres, stopOnSignals, type PostgresServices } from './support/stack';
import { crossThreadTable, measureCrossThread, type CrossThreadRun } from './recall-cross-thread';
import { line, loadLocomo, LOCOMO_PATH, type Conversation, type Turn } from './support/locomo';
import { distribution, quantile as quantileOf, round } from './support/stats';

const LARGE_THREAD_MESSAGES = 10_000;
const WINDOW_TOKENS = 16_000;
/** `BENCH_QUICK=1`: every ranking figure in full, the packs on every QUICK_PACK_EVERY-th question, fewer large-thread searches. */
const QUICK = process.env.BENCH_QUICK === '1';
const QUICK_PACK_EVERY = 5;
/** Searches on the 10,000-message thread (after 20 warm-up ones). */
const LARGE_THREAD_SEARCHES = QUICK ? 150 : 500;
/** Of those, how many are also timed inside Postgres (EXPLAIN ANALYZE). */
const IN_POSTGRES_SEARCHES = 100;
/** Which sections run: the single-thread figures, the cross-thread ones (issue 27), or both. */
const MODE = process.env.BENCH_RECALL_MODE ?? 'both';
if (!['thread', 'cross', 'both'].includes(MODE)) throw new Error(`BENCH_RECALL_MODE=${MODE}: thread, cross or both`);
/** Timed cross-thread searches on the 50 × 500-message user. */
const CROSS_SPEED_SEARCHES = QUICK ? 100 : 300;

interface Seeded {
  conversation: Conversation;
  threadId: string;
  seqOf: Map<string, number>;
}

function log(message: string): void {
  process.stderr.write(`[bench:recall ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** One thread of `turns` through the store's table (the search trigger indexes each complete message). */
async function seedThread(client: pg.Client, threadId: string, turns: readonly Turn[]): Promise<void> {
  await client.query(`INSERT INTO threads (id, owner_id, title, last_seq) VALUES ($1, 'bench-recall', $2, $3)`, [
    threadId,
    `LoCoMo ${threadId.slice(0, 8)}`,
    turns.length,
  ]);
  for (let start = 0; start < turns.length; start += 2000) {
    const batch = turns.slice(start, start + 2000);
    await client.query(
      `
      INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, created_at, updated_at, completed_at)
      SELECT gen_random_uuid(), $1::uuid, s, r, c, 'complete', greatest(length(c) / 4, 1), 'o200k_base', a, a, a
      FROM unnest($2::int[], $3::text[], $4::text[], $5::timestamptz[]) AS t(s, r, c, a)`,
      [
        threadId,
        batch.map((_, index) => start + index + 1),
        batch.map((turn) => turn.role),
        batch.map((turn) => turn.content),
        batch.map((turn) => turn.at),
      ],
    );
  }
}

/**
 * The thread right after a fold at the end of the conversation: the last `keep` messages in the window, the rest
 * covered by a summary (synthetic: it quotes no turn, so only window, pins and recall can hold evidence verbatim).
 */
async function foldedState(
  client: pg.Client,
  threadId: string,
  turns: readonly Turn[],
  keep: number,
  settings: ContextSettings,
): Promise<void> {
  const covered = Math.max(0, turns.length - keep);
  const summary = `Intent: a long friendly conversation over many sessions [#1–${covered}]. ${'They talked about family, work, hobbies and plans. '.repeat(60)}`;
  await client.query(
    `UPDATE threads SET summary_text = $2, summary_tokens = $3, summary_encoding = $4, summary_covered_through_seq = $5, summary_revision = 1 WHERE id = $1`,
    [threadId, summary, settings.counter.countText(summary), settings.counter.encoding, covered],
  );
  const window = turns.slice(covered);
  await client.query(
    `
    INSERT INTO context_entries (thread_id, seq, role, content, tokens, encoding)
    SELECT $1::uuid, s, r, c, k, $6 FROM unnest($2::int[], $3::text[], $4::text[], $5::int[]) AS t(s, r, c, k)`,
    [
      threadId,
      window.map((_, index) => covered + index + 1),
      window.map((turn) => turn.role),
      window.map((turn) => turn.content),
      window.map((turn) => settings.counter.countMessage({ role: turn.role, content: turn.content })),
      settings.counter.encoding,
    ],
  );
}

interface Tally {
  questions: number;
  at5: number;
  at10: number;
  at20: number;
  packQuestions: number;
  packRecall: number;
  packWindow: number;
  langchainQuestions: number;
  packLangChain: number;
}

const emptyTally = (): Tally => ({
  questions: 0,
  at5: 0,
  at10: 0,
  at20: 0,
  packQuestions: 0,
  packRecall: 0,
  packWindow: 0,
  langchainQuestions: 0,
  packLangChain: 0,
});

async function measureConversation(input: {
  db: Database;
  client: pg.Client;
  seeded: Seeded;
  settings: ContextSettings;
  keepMessages: number;
  triggerTokens: number;
  latencies: number[];
  byCategory: Map<number, { questions: number; at10: number }>;
}): Promise<Tally> {
  const { db, client, seeded, settings } = input;
  const search = createSearchRepository(db);
  const { threadId, conversation, seqOf } = seeded;
  const textOf = new Map(conversation.turns.map((turn) => [turn.diaId, turn.content]));
  const tools = createToolRegistry(deploymentTools()).definitions();
  const { langchainKeptTexts } = await loadLangChainPack();
  const tally = emptyTally();
  const nextSeq = conversation.turns.length + 1;
  for (const [index, question] of conversation.questions.entries()) {
    const evidence = question.evidence.map((id) => seqOf.get(id)).filter((seq): seq is number => seq !== undefined);
    if (evidence.length === 0) continue;
    tally.questions += 1;
    const started = performance.now();
    const ranked = await search.searchForModel({ threadId, query: question.question, limit: 20 });
    input.latencies.push(performance.now() - started);
    const rankOf = (k: number) => ranked.slice(0, k).some((match) => evidence.includes(match.seq));
    if (rankOf(5)) tally.at5 += 1;
    if (rankOf(10)) tally.at10 += 1;
    if (rankOf(20)) tally.at20 += 1;
    const category = input.byCategory.get(question.category) ?? { questions: 0, at10: 0 };
    category.questions += 1;
    if (rankOf(10)) category.at10 += 1;
    input.byCategory.set(question.category, category);
    if (QUICK && index % QUICK_PACK_EVERY !== 0) continue;

    // The pack at the end of the conversation with the question as the next user message.
    await client.query(
      `INSERT INTO context_entries (thread_id, seq, role, content, tokens, encoding) VALUES ($1, $2, 'user', $3, $4, $5)`,
      [
        threadId,
        nextSeq,
        question.question,
        settings.counter.countMessage({ role: 'user', content: question.question }),
        settings.counter.encoding,
      ],
    );
    const context = await loadThreadContext(db, threadId, { recall: true, recallTokens: settings.recallTokens });
    await client.query('DELETE FROM context_entries WHERE thread_id = $1 AND seq = $2', [threadId, nextSeq]);
    if (!context) throw new Error('thread vanished');
    const holds = (texts: readonly string[]) =>
      question.evidence.some((id) => texts.some((text) => text.includes(textOf.get(id) ?? '\u0000')));
    const withRecall = buildTurnPack(context, settings, tools).pack.messages.map((message) => message.content);
    const withoutRecall = buildTurnPack(context, { ...settings, recallTokens: 0 }, tools).pack.messages.map(
      (message) => message.content,
    );
    tally.packQuestions += 1;
    if (holds(withRecall)) tally.packRecall += 1;
    if (holds(withoutRecall)) tally.packWindow += 1;
    const kept = await langchainKeptTexts({
      systemPrompt: settings.systemPrefix,
      turns: conversation.turns,
      question: question.question,
      triggerTokens: input.triggerTokens,
    });
    tally.langchainQuestions += 1;
    if (holds(kept)) tally.packLangChain += 1;
  }
  return tally;
}

/** Loaded by a specifier TypeScript does not follow (see bench/tsconfig.peer.json). */
async function loadLangChainPack(): Promise<{
  langchainKeptTexts: (input: {
    systemPrompt: string;
    turns: Turn[];
    question: string;
    triggerTokens: number;
  }) => Promise<string[]>;
}> {
  const specifier = './recall-langchain-pack';
  return import(specifier) as Promise<{
    langchainKeptTexts: (input: {
      systemPrompt: string;
      turns: Turn[];
      question: string;
      triggerTokens: number;
    }) => Promise<string[]>;
  }>;
}

/**
 * The 10,000-message thread: LoCoMo's turns over and over; LARGE_THREAD_SEARCHES questions spread over all the
 * conversations (after 20 warm-up ones) are asked of it.
 */
async function largeThreadLatency(input: {
  db: Database;
  client: pg.Client;
  conversations: Conversation[];
}): Promise<{ latencies: number[]; inPostgres: number[]; planning: number[] }> {
  const all = input.conversations.flatMap((conversation) => conversation.turns);
  const turns = Array.from({ length: LARGE_THREAD_MESSAGES }, (_, index) => all[index % all.length] as Turn);
  const threadId = crypto.randomUUID();
  await seedThread(input.client, threadId, turns);
  await input.client.query('ANALYZE messages');
  const search = createSearchRepository(input.db);
  const latencies: number[] = [];
  const asked = input.conversations.flatMap((conversation) => conversation.questions);
  const stride = Math.max(1, Math.floor(asked.length / (LARGE_THREAD_SEARCHES + 20)));
  const questions = asked.filter((_, index) => index % stride === 0).slice(0, LARGE_THREAD_SEARCHES + 20);
  for (const [index, question] of questions.entries()) {
    const started = performance.now();
    await search.searchForModel({ threadId, query: question.question, limit: 10 });
    if (index >= 20) latencies.push(performance.now() - started); // the first ones warm the caches
  }
  // The statement's own planning and execution times as Postgres reports them (EXPLAIN ANALYZE adds its timing
  // overhead): on a shared machine, the part of the latency that is the query's and not the wait for a CPU here.
  const inPostgres: number[] = [];
  const planning: number[] = [];
  for (const question of questions.slice(20, 20 + IN_POSTGRES_SEARCHES)) {
    const statement = modelSearchSql({ threadId, query: question.question, limit: 10 });
    const [plan] = await input.db.$queryRaw<
      { 'QUERY PLAN': [{ 'Execution Time': number; 'Planning Time': number }] }[]
    >`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`;
    const times = plan?.['QUERY PLAN'][0];
    if (times) {
      inPostgres.push(times['Execution Time']);
      planning.push(times['Planning Time']);
    }
  }
  return { latencies, inPostgres, planning };
}

/** Figures of one run, for the table. */
interface Run {
  conversations: Conversation[];
  /** The single-thread figures (BENCH_RECALL_MODE thread or both). */
  thread?: ThreadRun;
  cross?: CrossThreadRun;
}

interface ThreadRun {
  settings: ContextSettings;
  keepMessages: number;
  total: Tally;
  byCategory: Map<number, { questions: number; at10: number }>;
  largest: { messages: number; latencies: number[] };
  large: number[];
  inPostgres: number[];
  planning: number[];
  packQuestions: number;
  langchainQuestions: number;
}

/** A fresh database on `services` with a pool and one client, closed after `work`. */
async function withDatabase<T>(
  services: PostgresServices,
  work: (db: Database, client: pg.Client) => Promise<T>,
): Promise<T> {
  const databaseUrl = await services.createDatabase('recall');
  const db = createDatabase({ url: databaseUrl, poolSize: 4 });
  const client = new pg.Client({ connectionString: databaseUrl });
  // When a signal stops Postgres under a running query, the error reaches the query's caller; without a listener
  // the client's 'error' event would end the process before the services are stopped and their directory removed.
  client.on('error', (error) => log(`database connection: ${error.message}`));
  try {
    await client.connect();
    return await work(db, client);
  } finally {
    await client.end().catch(() => undefined);
    await db.$disconnect();
  }
}

function benchSettings(): ContextSettings {
  return contextSettingsFromEnv(
    loadEnv({
      NODE_ENV: 'test',
      CONTEXT_MAX_INPUT_TOKENS: String(WINDOW_TOKENS),
      ...(process.env.RECALL_TOKENS ? { RECALL_TOKENS: process.env.RECALL_TOKENS } : {}),
    }),
  );
}

async function measureThread(services: PostgresServices, conversations: Conversation[]): Promise<ThreadRun> {
  let phase = performance.now();
  const lap = (what: string): void => {
    log(`${what} (${((performance.now() - phase) / 1000).toFixed(1)} s)`);
    phase = performance.now();
  };
  return withDatabase(services, async (db, client) => {
    lap('database migrated');
    const settings = benchSettings();
    const keepMessages = settings.keep.kind === 'messages' ? settings.keep.value : 12;
    const triggerTokens =
      settings.trigger.conditions.find((condition) => condition.kind === 'tokens')?.value ??
      Math.floor(settings.budget * 0.75);
    await client.query(`INSERT INTO users (id, kind) VALUES ('bench-recall', 'guest') ON CONFLICT DO NOTHING`);
    const seeded: Seeded[] = [];
    for (const conversation of conversations) {
      const threadId = crypto.randomUUID();
      await seedThread(client, threadId, conversation.turns);
      await foldedState(client, threadId, conversation.turns, keepMessages, settings);
      seeded.push({
        conversation,
        threadId,
        seqOf: new Map(conversation.turns.map((turn, index) => [turn.diaId, index + 1])),
      });
    }
    await client.query('ANALYZE');
    lap('conversations seeded');
    const total = emptyTally();
    const byCategory = new Map<number, { questions: number; at10: number }>();
    const largest = seeded.reduce((best, item) =>
      item.conversation.turns.length > best.conversation.turns.length ? item : best,
    );
    let largestLatencies: number[] = [];
    for (const item of seeded) {
      const latencies: number[] = [];
      const tally = await measureConversation({
        db,
        client,
        seeded: item,
        settings,
        keepMessages,
        triggerTokens,
        latencies,
        byCategory,
      });
      if (item === largest) largestLatencies = latencies;
      for (const key of Object.keys(total) as (keyof Tally)[]) total[key] += tally[key];
      lap(`${item.conversation.id}: ${tally.questions} questions, recall@10 ${round(tally.at10 / tally.questions, 3)}`);
    }
    const { latencies: large, inPostgres, planning } = await largeThreadLatency({ db, client, conversations });
    lap(`${LARGE_THREAD_MESSAGES}-message thread: ${large.length} searches`);
    return {
      settings,
      keepMessages,
      total,
      byCategory,
      large,
      inPostgres,
      planning,
      largest: { messages: largest.conversation.turns.length, latencies: largestLatencies },
      packQuestions: total.packQuestions,
      langchainQuestions: total.langchainQuestions,
    };
  });
}

async function measureCross(services: PostgresServices, conversations: Conversation[]): Promise<CrossThreadRun> {
  const started = performance.now();
  return withDatabase(services, async (db, client) => {
    const run = await measureCrossThread(
      {
        db,
        client,
        settings: benchSettings(),
        tools: createToolRegistry(deploymentTools()).definitions(),
        packEvery: QUICK ? QUICK_PACK_EVERY : 1,
        speedSearches: CROSS_SPEED_SEARCHES,
        log,
      },
      conversations,
    );
    log(`cross-thread done (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    return run;
  });
}

const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

function table(run: Run): string[] {
  return [
    `LoCoMo ${path.basename(LOCOMO_PATH)}: ${run.conversations.length} conversations${QUICK ? ' — BENCH_QUICK: packs on every ' + QUICK_PACK_EVERY + 'th question, fewer searches' : ''}`,
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.versions.node}; load average at the end ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' / ')} (1 / 5 / 15 min)`,
    ...(run.thread ? threadTable(run.thread) : []),
    ...(run.cross ? crossThreadTable(run.cross) : []),
  ];
}

function threadTable(run: ThreadRun): string[] {
  const { total, settings } = run;
  const n = total.questions;
  const small = distribution(run.largest.latencies);
  const big = distribution(run.large);
  const lines = [
    `single thread: ${n} questions (categories 1-4), each conversation one thread`,
    `pack at a ${WINDOW_TOKENS}-token window: budget ${settings.budget}, keep ${run.keepMessages} messages, RECALL_TOKENS ${settings.recallTokens}`,
    line('recall@5 (distinct ranked turns)', total.at5 / n, undefined, 3, 'BM25 reference 0.551'),
    line('recall@10 (distinct ranked turns)', total.at10 / n, { op: '>=', value: 0.75 }, 3, 'BM25 reference 0.632'),
    line('recall@20 (distinct ranked turns)', total.at20 / n, undefined, 3, 'BM25 reference 0.682'),
    ...[...run.byCategory.entries()]
      .sort(([a], [b]) => a - b)
      .map(([category, figures]) =>
        line(
          `  recall@10, category ${category} ${CATEGORY_NAMES[category] ?? ''} (${figures.questions})`,
          figures.at10 / figures.questions,
        ),
      ),
    line(`(a) evidence in the pack, with auto-recall (${run.packQuestions} q)`, total.packRecall / run.packQuestions, {
      op: '>=',
      value: 0.6,
    }),
    line(
      '(b) evidence in the pack, without auto-recall (window + pins)',
      total.packWindow / run.packQuestions,
      undefined,
      3,
      'reported; expected < 0.05',
    ),
    line(
      `(c) evidence in LangChain summarizationMiddleware's pack (${run.langchainQuestions} q)`,
      total.packLangChain / run.langchainQuestions,
    ),
    line(`search p50 ms, largest thread (${run.largest.messages} messages)`, small.p50, undefined, 2),
    line('search p95 ms, largest thread', quantileOf(run.largest.latencies, 0.95), undefined, 2),
    line(
      `search p50 ms, ${LARGE_THREAD_MESSAGES}-message thread (${run.large.length} searches)`,
      big.p50,
      undefined,
      2,
    ),
    line(
      `search p95 ms, ${LARGE_THREAD_MESSAGES}-message thread`,
      quantileOf(run.large, 0.95),
      { op: '<=', value: 20 },
      2,
    ),
    line(
      `  the statement inside Postgres p50 / p95 ms (${run.inPostgres.length} searches)`,
      quantileOf(run.inPostgres, 0.5),
      undefined,
      2,
      `p95 ${quantileOf(run.inPostgres, 0.95).toFixed(2)} ms, EXPLAIN ANALYZE execution time`,
    ),
    line(
      '  its planning p50 / p95 ms',
      quantileOf(run.planning, 0.5),
      undefined,
      2,
      `p95 ${quantileOf(run.planning, 0.95).toFixed(2)} ms`,
    ),
  ];
  return lines;
}

async function main(): Promise<void> {
  const started = performance.now();
  const conversations = await loadLocomo();
  log(
    `${conversations.length} conversations, ${conversations.reduce((sum, c) => sum + c.turns.length, 0)} turns from ${LOCOMO_PATH}${QUICK ? ' (BENCH_QUICK)' : ''}`,
  );
  const services = await startPostgres();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= services.stop());
  const removeHandlers = stopOnSignals(stop, log);
  try {
    const run: Run = { conversations };
    if (MODE !== 'cross') run.thread = await measureThread(services, conversations);
    if (MODE !== 'thread') {
      log(
        `load average before the cross-thread section ${loadavg()
          .map((value) => value.toFixed(1))
          .join(' / ')}`,
      );
      run.cross = await measureCross(services, conversations);
    }
    process.stdout.write(`${table(run).join('\n')}\n`);
  } finally {
    await stop();
    removeHandlers();
    log(`services stopped; ${((performance.now() - started) / 1000).toFixed(0)} s in all`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:recall failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
