import { Prisma } from './generated/client';

/**
 * The ranking of transcript search, as SQL shared by the `search_transcript` tool and auto-recall (which folds it
 * into the statement that reads the context, so recall costs the turn no extra round trip). Every rule below was
 * measured on LoCoMo (`npm run bench:recall`; what each one changed is in bench/README.md).
 *
 * - Candidates are the thread's searchable messages (complete, not superseded, not forgotten) matching a query
 *   lexeme (GIN index), stemmed by the deployment's text search configuration, stop words removed.
 * - Rare terms select, common ones only score: how common each query term is in this conversation is estimated on
 *   its latest SAMPLE_MESSAGES messages; a term in more than COMMON_SHARE of them (a name said in every other
 *   message) does not fetch candidates, it only adds to the score of those the rarer terms found (with its
 *   estimated frequency). This keeps a search on a 10,000-message thread to a few hundred rows. When every term is
 *   common, they all select.
 * - Each candidate is scored with Okapi BM25 over lexemes, document frequencies counted in the thread itself.
 * - Proximity: two different query terms close together in a message (at most PROXIMITY_SPAN words apart) add
 *   PROXIMITY_SHARE of the rarer one's weight per pair, the most for adjacent words (a phrase of the query).
 * - Neighbouring turns: a turn gains NEIGHBOUR_SHARE of its best neighbour's score (an answer is found through the
 *   question it answers, and a question through its answer).
 * - When the query asks when something happened, a turn saying when (yesterday, last week, 3 days ago, a weekday…)
 *   gains TIME_SHARE of its score.
 */

/** The tunable weights of the ranking (the defaults are what bench:recall measured best; see bench/README.md). */
export interface RankingTuning {
  k1: number;
  b: number;
  neighbourShare: number;
  proximityShare: number;
  proximitySpan: number;
  timeShare: number;
  candidateBudget: number;
  sampleMessages: number;
}

export const RANKING: RankingTuning = {
  k1: 1.2,
  b: 0.75,
  neighbourShare: 0.3,
  proximityShare: 0,
  proximitySpan: 3,
  timeShare: 0,
  candidateBudget: 800,
  sampleMessages: 100,
};

/** How much of a query is parsed (a pasted document as a query is cut here). */
export const QUERY_MAX_CHARS = 4000;
/** Rows kept after BM25 for the finer rules (neighbours, time): far more than any caller asks for. */
const RESCORED_ROWS = 300;
/** Characters of a message read for the words that say when. */
const TIME_CHARS = 2000;

/** The text search configuration of the deployment (search_settings, set by `npm run search:reindex`). */
export const SEARCH_CONFIG = Prisma.raw(`(SELECT language::regconfig FROM search_settings WHERE id = 1)`);

/** A query asking when: "when did…", "what date / day / month / year / time…", "how long ago…". */
const ASKS_WHEN = String.raw`^\s*when\M|\m(what|which)\s+(date|day|month|year|week|time)\M|\mhow\s+long\s+ago\M`;
/** Words that say when, in a message: relative times and weekdays (dates said in the conversation). */
const SAYS_WHEN = String.raw`\m(yesterday|today|tonight|tomorrow|ago|last\s+(week|weekend|month|year|night|time|summer|winter|spring|fall|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|next\s+(week|weekend|month|year)|this\s+(week|weekend|month|year|morning|afternoon|evening|summer)|(mon|tues|wednes|thurs|fri|satur|sun)day|recently|just\s+(got|had|went|finished|started))\M`;

export interface RankedSeqsOptions {
  /** SQL of the thread id (a uuid parameter or a column). */
  threadId: Prisma.Sql;
  /** SQL of the query text. */
  query: Prisma.Sql;
  /** SQL bounds on seq: fromSeq <= seq < beforeSeq. */
  fromSeq: Prisma.Sql;
  beforeSeq: Prisma.Sql;
  /** SQL of an int[] of seqs never returned (the window and pinned entries of auto-recall). */
  excludeSeqs?: Prisma.Sql;
  limit: Prisma.Sql;
}

const float = (value: number): Prisma.Sql => Prisma.raw(`${Number(value)}::float8`);

/**
 * A query (usable as a subquery) of `seq` and `score` of the best matches, best first, at most `limit` rows.
 */
export function rankedSeqsSql(options: RankedSeqsOptions, tuning: RankingTuning = RANKING): Prisma.Sql {
  const exclude = options.excludeSeqs ?? Prisma.sql`'{}'::int[]`;
  const searchable = Prisma.sql`m.status = 'complete' AND NOT m.superseded AND m.deleted_at IS NULL`;
  const { k1, b } = tuning;
  const SAMPLE = Math.trunc(tuning.sampleMessages);
  // A message says when (read from its first TIME_CHARS characters) only matters to a query asking when.
  const timed = tuning.timeShare > 0
    ? Prisma.sql`
      SELECT s.seq, s.score * CASE WHEN left(m.content, ${TIME_CHARS}::int) ~* ${SAYS_WHEN} THEN ${float(1 + tuning.timeShare)} ELSE 1 END AS score
      FROM smoothed s LEFT JOIN messages m ON (SELECT asks_when FROM qv) AND m.thread_id = ${options.threadId} AND m.seq = s.seq`
    : Prisma.sql`SELECT seq, score FROM smoothed`;
  return Prisma.sql`
    WITH qtext AS (
      SELECT left(${options.query}, ${QUERY_MAX_CHARS}::int) AS text
    ), qv AS (
      SELECT to_tsvector(${SEARCH_CONFIG}, qtext.text) AS v, qtext.text ~* ${ASKS_WHEN} AS asks_when FROM qtext
    ), terms AS (
      SELECT u.lexeme, u.positions AS qpos, quote_literal(u.lexeme)::tsquery AS tq FROM qv, unnest(qv.v) u
      WHERE strpos(u.lexeme, chr(92)) = 0
    ), thread AS (
      SELECT greatest((SELECT last_seq FROM threads WHERE id = ${options.threadId}), 1) AS last_seq
    ), sample AS (
      SELECT m.search_vector AS v FROM messages m, thread
      WHERE m.thread_id = ${options.threadId} AND m.search_vector IS NOT NULL
        AND m.seq = ANY(ARRAY(SELECT generate_series(1, thread.last_seq, greatest(thread.last_seq / ${SAMPLE}::int, 1))))
    ), share AS (
      SELECT t.lexeme, t.qpos, t.tq,
        (SELECT count(*) FROM sample s WHERE s.v @@ t.tq)::float8 / greatest((SELECT count(*) FROM sample), 1) AS share
      FROM terms t
    ), ordered AS (
      SELECT lexeme, tq, row_number() OVER w AS rank, sum(share) OVER w * (SELECT last_seq FROM thread) AS est_rows
      FROM share WINDOW w AS (ORDER BY share, lexeme)
    ), selecting AS (
      SELECT lexeme, tq FROM ordered WHERE rank = 1 OR est_rows <= ${Prisma.raw(String(Math.trunc(tuning.candidateBudget)))}
    ), tsq AS (
      SELECT string_agg(tq::text, ' | ')::tsquery AS q FROM selecting
    ), cand AS (
      SELECT m.seq, m.search_vector AS v FROM messages m, tsq
      WHERE m.thread_id = ${options.threadId} AND m.search_vector @@ tsq.q AND ${searchable}
        AND m.seq >= ${options.fromSeq} AND m.seq < ${options.beforeSeq}
    ), matches AS (
      SELECT c.seq, u.lexeme, u.positions AS pos, coalesce(cardinality(u.positions), 1)::float8 AS tf, length(c.v)::float8 AS len
      FROM cand c, unnest(c.v) u WHERE u.lexeme IN (SELECT lexeme FROM terms)
    ), corpus AS (
      SELECT thread.last_seq::float8 AS n, greatest((SELECT avg(length(v)) FROM cand), 1)::float8 AS avgdl FROM thread
    ), df AS (
      SELECT lexeme, count(*)::float8 AS n FROM matches GROUP BY lexeme
    ), idf AS (
      SELECT s.lexeme, ln(1 + (corpus.n - d.n + 0.5) / (d.n + 0.5)) AS w
      FROM share s LEFT JOIN df ON df.lexeme = s.lexeme, corpus, LATERAL (
        SELECT CASE WHEN s.lexeme IN (SELECT lexeme FROM selecting) THEN coalesce(df.n, 1)
          ELSE greatest(s.share * corpus.n, coalesce(df.n, 1)) END AS n
      ) d
    ), bm25 AS (
      SELECT m.seq, sum(i.w * m.tf * ${float(k1 + 1)} / (m.tf + ${float(k1)} * (1 - ${float(b)} + ${float(b)} * m.len / corpus.avgdl))) AS score
      FROM matches m JOIN idf i USING (lexeme), corpus GROUP BY m.seq
    ), near AS (
      SELECT seq, sum(${float(tuning.proximityShare)} * least(w, next_w) / (next_p - p)) AS bonus FROM (
        SELECT m.seq, m.lexeme, i.w, p, lead(m.lexeme) OVER o AS next_lexeme, lead(i.w) OVER o AS next_w, lead(p) OVER o AS next_p
        FROM matches m JOIN idf i USING (lexeme), unnest(m.pos) p
        WHERE ${float(tuning.proximityShare)} > 0
        WINDOW o AS (PARTITION BY m.seq ORDER BY p)
      ) x
      WHERE next_lexeme <> lexeme AND next_p - p <= ${Prisma.raw(String(Math.trunc(tuning.proximitySpan)))}
      GROUP BY seq
    ), scored AS (
      SELECT s.seq, s.score + coalesce(n.bonus, 0) AS score FROM bm25 s LEFT JOIN near n USING (seq)
    ), smoothed AS (
      SELECT seq, score FROM (
        SELECT seq, score + ${float(tuning.neighbourShare)} * greatest(
            CASE WHEN lag(seq) OVER w = seq - 1 THEN lag(score) OVER w ELSE 0 END,
            CASE WHEN lead(seq) OVER w = seq + 1 THEN lead(score) OVER w ELSE 0 END) AS score
        FROM scored WINDOW w AS (ORDER BY seq)
      ) x
      WHERE seq <> ALL (coalesce(${exclude}, '{}'::int[]))
      ORDER BY score DESC, seq DESC LIMIT ${RESCORED_ROWS}
    ), timed AS (${timed})
    SELECT seq, score FROM timed ORDER BY score DESC, seq DESC LIMIT ${options.limit}`;
}
