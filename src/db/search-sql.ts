import { Prisma } from './generated/client';

/**
 * The ranking of transcript search, as SQL shared by the `search_transcript` tool and auto-recall (which folds it
 * into the statement that reads the context, so recall costs the turn no extra round trip). Every rule below was
 * measured on LoCoMo (`npm run bench:recall`; what each one changed is in bench/README.md).
 *
 * - Terms are the query's lexemes (stemmed by the deployment's text search configuration, stop words removed).
 *   Auto-recall also passes the answer the user's message replies to as `context`: its words weigh
 *   contextWeight ÷ the number of the message's own terms (they matter when the message says little: "and then?").
 * - Rare terms select, common ones only score: how common each term is in this conversation is estimated on
 *   sampleMessages messages spread over the thread; terms select candidates (GIN index) rarest first while the
 *   estimated rows stay within candidateBudget (always at least the rarest). A term said in every other message (a
 *   name) then fetches nothing on a long thread, it only adds to the score of the messages the rarer terms found.
 *   This bounds the work of a search on a 10,000-message thread; on a few hundred messages every term selects.
 * - Candidates are the thread's searchable messages (complete, not superseded, not forgotten) within the bounds.
 * - Each is scored with Okapi BM25 over lexemes (k1, b), document frequencies counted in the thread itself (a
 *   common term's estimated from the sample).
 * - Proximity: two different query terms at most proximitySpan words apart add proximityShare of the rarer one's
 *   weight, divided by their distance (adjacent words, a phrase of the query, add the most).
 * - Neighbouring turns: a turn gains neighbourShare of the better of the turns just before and after it, and
 *   farShare of the better of the turns two away (an answer is found through the question it answers, a question
 *   through its answer, a detail through the exchange around it).
 */

/** The tunable weights of the ranking (the defaults are what bench:recall measured best; see bench/README.md). */
export interface RankingTuning {
  k1: number;
  b: number;
  neighbourShare: number;
  farShare: number;
  proximityShare: number;
  proximitySpan: number;
  candidateBudget: number;
  contextWeight: number;
  sampleMessages: number;
}

export const RANKING: RankingTuning = {
  k1: 1.2,
  b: 0.75,
  neighbourShare: 0.6,
  farShare: 0.3,
  proximityShare: 0.3,
  proximitySpan: 3,
  candidateBudget: 800,
  contextWeight: 0.3,
  sampleMessages: 100,
};

/** How much of a query is parsed (a pasted document as a query is cut here). */
export const QUERY_MAX_CHARS = 4000;

/** The text search configuration of the deployment (search_settings, set by `npm run search:reindex`). */
export const SEARCH_CONFIG = Prisma.raw(`(SELECT language::regconfig FROM search_settings WHERE id = 1)`);

export interface RankedSeqsOptions {
  /** SQL of the thread id (a uuid parameter or a column). */
  threadId: Prisma.Sql;
  /** SQL of the query text. */
  query: Prisma.Sql;
  /** SQL of text the query replies to (auto-recall: the answer before the user's message): its words weigh contextWeight. */
  context?: Prisma.Sql;
  /** SQL bounds on seq: fromSeq <= seq < beforeSeq. */
  fromSeq: Prisma.Sql;
  beforeSeq: Prisma.Sql;
  /** SQL of an int[] of seqs never returned (the window and pinned entries of auto-recall). */
  excludeSeqs?: Prisma.Sql;
  limit: Prisma.Sql;
}

const float = (value: number): Prisma.Sql => Prisma.raw(`${Number(value)}::float8`);

/**
 * The CTEs shared by both rankings, after `terms` and `sample`: each term's share of the sampled messages, and the
 * rarest terms whose estimated matches (share × `rowCount`) fit the candidate budget (always the rarest one), as `tsq`.
 */
function termSelectionSql(rowCount: Prisma.Sql, tuning: RankingTuning): Prisma.Sql {
  return Prisma.sql`share AS (
      SELECT t.lexeme, t.weight, t.tq,
        (SELECT count(*) FROM sample s WHERE s.v @@ t.tq)::float8 / greatest((SELECT count(*) FROM sample), 1) AS share
      FROM terms t
    ), ordered AS (
      SELECT lexeme, tq, row_number() OVER w AS rank, sum(share) OVER w * ${rowCount} AS est_rows
      FROM share WINDOW w AS (ORDER BY share / greatest(weight, 0.000001), lexeme)
    ), selecting AS (
      SELECT lexeme, tq FROM ordered WHERE rank = 1 OR est_rows <= ${Prisma.raw(String(Math.trunc(tuning.candidateBudget)))}
    ), tsq AS (
      SELECT string_agg(tq::text, ' | ')::tsquery AS q FROM selecting
    )`;
}

/**
 * What the scoring steps of a ranking work on: a thread's own ranking keys a match by `seq`; the ranking across a
 * user's other threads by message `id`, carrying its thread, seq and date along (neighbours are found within a thread).
 */
interface ScoringSubject {
  /** The column that names a candidate in the steps. */
  key: 'seq' | 'id';
  /** The candidates' columns carried through to `smoothed` (the key among them). */
  columns: readonly string[];
  /** The CTE of the candidates: those columns and `v`, the search vector. */
  candidates: string;
  /** SQL of the number of messages searched (BM25's N). */
  corpusSize: Prisma.Sql;
  /** The window in which a candidate's neighbouring turns are its lag and lead. */
  neighbours: Prisma.Sql;
}

const THREAD_STEPS: ScoringSubject = {
  key: 'seq',
  columns: ['seq'],
  candidates: 'cand',
  corpusSize: Prisma.sql`(SELECT last_seq FROM thread)`,
  neighbours: Prisma.sql`ORDER BY seq`,
};

const ELSEWHERE_STEPS: ScoringSubject = {
  key: 'id',
  columns: ['id', 'thread_id', 'seq', 'created_at'],
  candidates: 'uniq',
  corpusSize: Prisma.sql`(SELECT n FROM total)`,
  neighbours: Prisma.sql`PARTITION BY thread_id ORDER BY seq`,
};

/**
 * The scoring CTEs shared by both rankings, after `terms`, `share`, `selecting` and the candidates: `matches` (each
 * candidate's query terms with their positions), `stats` (corpus size and average length), `df`, `idf`, `bm25`
 * (Okapi BM25), `near` (the proximity bonus), `scored` and `smoothed` (the neighbouring-turn shares): the subject's
 * columns and `score`.
 */
function scoringStepsSql(subject: ScoringSubject, tuning: RankingTuning): Prisma.Sql {
  const { k1, b } = tuning;
  const key = Prisma.raw(subject.key);
  const columns = (alias?: string): Prisma.Sql =>
    Prisma.raw(subject.columns.map((column) => (alias ? `${alias}.${column}` : column)).join(', '));
  return Prisma.sql`matches AS (
      -- A candidate's query terms with their positions: setweight marks the terms (the index has weight D only) and
      -- ts_filter keeps them, in C, instead of unnesting every lexeme of every candidate to keep a few.
      SELECT ${columns('c')}, u.lexeme, u.positions AS pos, coalesce(cardinality(u.positions), 1)::float8 AS tf, length(c.v)::float8 AS len
      FROM ${Prisma.raw(subject.candidates)} c, unnest(ts_filter(setweight(c.v, 'A', (SELECT array_agg(lexeme) FROM terms)), '{a}')) u
    ), stats AS (
      SELECT ${subject.corpusSize}::float8 AS n, greatest((SELECT avg(length(v)) FROM ${Prisma.raw(subject.candidates)}), 1)::float8 AS avgdl
    ), df AS (
      SELECT lexeme, count(*)::float8 AS n FROM matches GROUP BY lexeme
    ), idf AS (
      SELECT s.lexeme, s.weight * ln(1 + (stats.n - d.n + 0.5) / (d.n + 0.5)) AS w
      FROM share s LEFT JOIN df ON df.lexeme = s.lexeme, stats, LATERAL (
        SELECT CASE WHEN s.lexeme IN (SELECT lexeme FROM selecting) THEN coalesce(df.n, 1)
          ELSE greatest(s.share * stats.n, coalesce(df.n, 1)) END AS n
      ) d
    ), bm25 AS (
      -- The planner expects a row or two of every CTE here: carrying thread, seq and date along, and joining the
      -- messages' other columns only to the best few, keeps it from nested loops over all candidates squared.
      SELECT ${columns('m')}, sum(i.w * m.tf * ${float(k1 + 1)} / (m.tf + ${float(k1)} * (1 - ${float(b)} + ${float(b)} * m.len / stats.avgdl))) AS score
      FROM matches m JOIN idf i USING (lexeme), stats GROUP BY ${columns('m')}
    ), near AS (
      SELECT ${key}, sum(${float(tuning.proximityShare)} * least(w, next_w) / (next_p - p)) AS bonus FROM (
        SELECT m.${key}, m.lexeme, i.w, p, lead(m.lexeme) OVER o AS next_lexeme, lead(i.w) OVER o AS next_w, lead(p) OVER o AS next_p
        FROM matches m JOIN idf i USING (lexeme), unnest(m.pos) p
        WHERE ${float(tuning.proximityShare)} > 0
        WINDOW o AS (PARTITION BY m.${key} ORDER BY p)
      ) x
      WHERE next_lexeme <> lexeme AND next_p - p <= ${Prisma.raw(String(Math.trunc(tuning.proximitySpan)))}
      GROUP BY ${key}
    ), scored AS (
      SELECT ${columns('s')}, s.score + coalesce(n.bonus, 0) AS score FROM bm25 s LEFT JOIN near n USING (${key})
    ), smoothed AS (
      SELECT ${columns()}, score + ${float(tuning.neighbourShare)} * greatest(
          CASE WHEN lag(seq) OVER w = seq - 1 THEN lag(score) OVER w ELSE 0 END,
          CASE WHEN lead(seq) OVER w = seq + 1 THEN lead(score) OVER w ELSE 0 END)
        + ${float(tuning.farShare)} * greatest(
          CASE WHEN lag(seq) OVER w = seq - 2 THEN lag(score) OVER w WHEN lag(seq, 2) OVER w = seq - 2 THEN lag(score, 2) OVER w ELSE 0 END,
          CASE WHEN lead(seq) OVER w = seq + 2 THEN lead(score) OVER w WHEN lead(seq, 2) OVER w = seq + 2 THEN lead(score, 2) OVER w ELSE 0 END) AS score
      FROM scored WINDOW w AS (${subject.neighbours})
    )`;
}

/**
 * A query (usable as a subquery) of `seq` and `score` of the best matches, best first, at most `limit` rows.
 */
export function rankedSeqsSql(options: RankedSeqsOptions, tuning: RankingTuning = RANKING): Prisma.Sql {
  const exclude = options.excludeSeqs ?? Prisma.sql`'{}'::int[]`;
  const searchable = Prisma.sql`m.status = 'complete' AND NOT m.superseded AND m.deleted_at IS NULL`;
  const SAMPLE = Math.trunc(tuning.sampleMessages);
  return Prisma.sql`
    WITH qv AS (
      SELECT to_tsvector(${SEARCH_CONFIG}, left(${options.query}, ${QUERY_MAX_CHARS}::int)) AS v,
        to_tsvector(${SEARCH_CONFIG}, left(${options.context ?? Prisma.sql`''`}, ${QUERY_MAX_CHARS}::int)) AS cv
    ), terms AS (
      SELECT lexeme, max(weight) AS weight, quote_literal(lexeme)::tsquery AS tq FROM (
        SELECT u.lexeme, 1::float8 AS weight FROM qv, unnest(qv.v) u
        UNION ALL
        SELECT u.lexeme, ${float(tuning.contextWeight)} / greatest(length(qv.v), 1) FROM qv, unnest(qv.cv) u
      ) x WHERE strpos(lexeme, chr(92)) = 0 GROUP BY lexeme
    ), thread AS (
      SELECT greatest((SELECT last_seq FROM threads WHERE id = ${options.threadId}), 1) AS last_seq
    ), sample AS (
      SELECT m.search_vector AS v FROM messages m, thread
      WHERE m.thread_id = ${options.threadId} AND m.search_vector IS NOT NULL
        AND m.seq = ANY(ARRAY(SELECT generate_series(1, thread.last_seq, greatest(thread.last_seq / ${SAMPLE}::int, 1))))
    ), ${termSelectionSql(Prisma.sql`(SELECT last_seq FROM thread)`, tuning)}, cand AS (
      -- One bitmap scan of messages_thread_search_idx (thread and terms). The seq bounds are filters (seq + 0): as an
      -- index range with a bound known only at run time, the planner guesses 50 rows and reads the whole thread by seq.
      SELECT m.seq, m.search_vector AS v FROM messages m
      WHERE m.thread_id = ${options.threadId} AND m.search_vector @@ (SELECT q FROM tsq) AND ${searchable}
        AND m.seq + 0 >= ${options.fromSeq} AND m.seq + 0 < ${options.beforeSeq}
    ), ${scoringStepsSql(THREAD_STEPS, tuning)}
    SELECT seq, score FROM smoothed WHERE seq <> ALL (coalesce(${exclude}, '{}'::int[]))
    ORDER BY score DESC, seq DESC LIMIT ${options.limit}`;
}

/** Messages a search across a user's other threads reads at most per thread (the newest matches). */
export const ELSEWHERE_PER_THREAD = 200;
/**
 * Matches a search across a user's other threads ranks at most, all threads together: the newest matches of the
 * most recently active threads first. Without it the work grew with the user's history (ELSEWHERE_PER_THREAD times
 * their chats: a user with 200 busy chats on one subject had 40,000 messages ranked on every turn: bench/README.md,
 * "Sixth pass"); with it a turn's recall costs the same whatever the history. Rare terms select few matches per
 * chat, so the bound binds only when a query's terms are common in many chats, where the oldest chats' matches
 * are the least telling.
 */
export const ELSEWHERE_MAX_MATCHES = 1000;
/**
 * Auto-recall searches the user's most recently active chats, at most this many: every chat searched costs index
 * probes on every turn whether it matches or not (with 200 chats, cross-thread recall doubled the Postgres work of a
 * turn: bench/README.md, "Sixth pass"). An explicit search (search_transcript) still reads them all.
 */
export const ELSEWHERE_RECALL_CHATS = 50;

export interface ElsewhereRankedOptions {
  /** SQL of the asking thread's id: its owner's other threads are searched, never its own fork family. */
  threadId: Prisma.Sql;
  /** SQL of the query text. */
  query: Prisma.Sql;
  limit: Prisma.Sql;
  /**
   * The most recently active chats searched, at most (auto-recall: ELSEWHERE_RECALL_CHATS); without it every chat of
   * the user (an explicit search).
   */
  maxChats?: number;
}

/**
 * A query (usable as a subquery) of the best matches in the other threads of the asking thread's owner, best first:
 * `id`, `thread_id`, `title`, `seq`, `role`, `content`, `created_at`, `score` (cross-thread recall, issue 27).
 *
 * - Never another user's thread, never a deleted thread (its rows are gone), never a forgotten message, nor a fork's
 *   copy of a message forgotten where it was first written.
 * - Never the asking thread's fork family: the threads it descends from and everything forked from them (its parent,
 *   its forks and their forks, its siblings): forks share their prefix, and what was said after a fork stays on its side.
 * - A message copied by forks counts once (`origin_message_id`): the original stands for it (else the oldest copy).
 * - One score over the user's corpus, with the rules of the thread's own ranking (rankedSeqsSql), so scores of
 *   different threads compare with each other and with the asking thread's: rare terms select and common ones only
 *   score (how common each term is estimated on about sampleMessages messages spread over the searched threads,
 *   its rows as that share of all their messages, within candidateBudget); Okapi BM25 whose document frequencies are
 *   counted over the matches in all the searched threads and whose corpus size is their messages; proximity; and
 *   the neighbouring-turn shares, neighbours taken within the same thread. Measured on LoCoMo with each session a
 *   chat of its own (bench:recall's cross-thread mode; bench/README.md).
 * - Each thread is read through messages_thread_search_idx (thread and terms), its newest ELSEWHERE_PER_THREAD matches.
 */
export function elsewhereRankedSql(options: ElsewhereRankedOptions, tuning: RankingTuning = RANKING): Prisma.Sql {
  const SAMPLE = Math.trunc(tuning.sampleMessages);
  return Prisma.sql`
    WITH RECURSIVE up AS (
      SELECT x.id, x.forked_from_thread_id FROM threads x WHERE x.id = ${options.threadId}
      UNION SELECT p.id, p.forked_from_thread_id FROM threads p JOIN up ON p.id = up.forked_from_thread_id
    ), family AS (
      SELECT id FROM up
      UNION SELECT c.id FROM threads c JOIN family f ON c.forked_from_thread_id = f.id
    ), corpus AS (
      SELECT o.id, o.title, o.last_seq, o.last_activity_at FROM threads o
      WHERE o.owner_id = (SELECT owner_id FROM threads WHERE id = ${options.threadId}) AND o.id NOT IN (SELECT id FROM family)
      ORDER BY o.last_activity_at DESC, o.id LIMIT ${options.maxChats ?? null}::int
    ), total AS (
      SELECT greatest((SELECT sum(last_seq) FROM corpus), 1)::float8 AS n
    ), qv AS (
      SELECT to_tsvector(${SEARCH_CONFIG}, left(${options.query}, ${QUERY_MAX_CHARS}::int)) AS v
    ), terms AS (
      SELECT DISTINCT u.lexeme, 1::float8 AS weight, quote_literal(u.lexeme)::tsquery AS tq FROM qv, unnest(qv.v) u WHERE strpos(u.lexeme, chr(92)) = 0
    ), sample AS (
      -- About SAMPLE messages spread over the searched threads (every step-th seq of each), by the (thread, seq) key.
      SELECT m.search_vector AS v FROM corpus c, total, messages m
      WHERE m.thread_id = c.id AND m.search_vector IS NOT NULL
        AND m.seq = ANY(ARRAY(SELECT generate_series(1, c.last_seq, greatest((total.n / ${SAMPLE}::int)::int, 1))))
      LIMIT ${SAMPLE * 4}::int
    ), ${termSelectionSql(Prisma.sql`(SELECT n FROM total)`, tuning)}, cand AS (
      -- Without the text: it is read for the best few only, at the end (carrying it through the sorts cost ~15%).
      -- The most recently active chats first, read lazily: the outer LIMIT stops the reading (ELSEWHERE_MAX_MATCHES).
      SELECT m.* FROM (SELECT id FROM corpus ORDER BY last_activity_at DESC, id) c CROSS JOIN LATERAL (
        SELECT m.id, m.thread_id, m.seq, m.created_at, m.search_vector AS v, coalesce(m.origin_message_id, m.id) AS origin
        FROM messages m
        WHERE m.thread_id = c.id AND m.search_vector @@ (SELECT q FROM tsq)
          AND m.status = 'complete' AND NOT m.superseded AND m.deleted_at IS NULL AND m.seq IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM messages o WHERE o.id = m.origin_message_id AND o.deleted_at IS NOT NULL)
        ORDER BY m.seq DESC LIMIT ${ELSEWHERE_PER_THREAD}::int
      ) m
      LIMIT ${ELSEWHERE_MAX_MATCHES}::int
    ), uniq AS (
      -- The original where it is searched, else the oldest copy.
      SELECT DISTINCT ON (origin) * FROM cand ORDER BY origin, (id = origin) DESC, created_at, thread_id
    ), ${scoringStepsSql(ELSEWHERE_STEPS, tuning)}, best AS (
      SELECT id, score FROM smoothed ORDER BY score DESC, created_at DESC LIMIT ${options.limit}
    )
    SELECT u.id, u.thread_id, c.title, u.seq, u.role, u.content, u.created_at, s.score
    FROM best s JOIN messages u ON u.id = s.id JOIN corpus c ON c.id = u.thread_id
    ORDER BY s.score DESC, u.created_at DESC`;
}
