import { Prisma } from './generated/client';

/**
 * The ranking of transcript search, as SQL shared by the search routes, the `search_transcript` tool and auto-recall
 * (which folds it into the statement that reads the context, so recall costs the turn no extra round trip).
 *
 * Candidates are the thread's searchable messages (complete, not superseded, not forgotten) matching any lexeme of
 * the query (GIN index). Each is scored with Okapi BM25 over lexemes (stemmed by the deployment's text search
 * configuration, stop words removed), with document frequencies counted in the thread itself, so a word said all the
 * time in this conversation weighs little. A turn also gains a share of its best neighbour's score: an answer is
 * found through the question it answers, and a question through its answer (measured on LoCoMo; see bench/README.md).
 */

/** BM25 term-frequency saturation and length normalisation (the usual values). */
const K1 = 1.2;
const B = 0.75;
/** Share of the best neighbouring turn's score a turn gains (see rankedSeqsSql). */
export const NEIGHBOUR_SHARE = 0.3;
/** How much of a query is parsed (a pasted document as a query is cut here). */
export const QUERY_MAX_CHARS = 4000;

/** The text search configuration of the deployment (search_settings, set by `npm run search:reindex`). */
export const SEARCH_CONFIG = Prisma.raw(`(SELECT language::regconfig FROM search_settings WHERE id = 1)`);

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

/**
 * A query (usable as a subquery) of `seq` and `score` of the best matches, best first, at most `limit` rows.
 */
export function rankedSeqsSql(options: RankedSeqsOptions): Prisma.Sql {
  const exclude = options.excludeSeqs ?? Prisma.sql`'{}'::int[]`;
  return Prisma.sql`
    WITH terms AS (
      SELECT DISTINCT u.lexeme FROM unnest(to_tsvector(${SEARCH_CONFIG}, left(${options.query}, ${QUERY_MAX_CHARS}::int))) u
      WHERE strpos(u.lexeme, '''') = 0 AND strpos(u.lexeme, chr(92)) = 0
    ), tsq AS (
      SELECT string_agg('''' || lexeme || '''', ' | ')::tsquery AS q FROM terms
    ), cand AS (
      SELECT m.seq, m.search_vector AS v FROM messages m, tsq
      WHERE m.thread_id = ${options.threadId} AND m.search_vector @@ tsq.q
        AND m.status = 'complete' AND NOT m.superseded AND m.deleted_at IS NULL
        AND m.seq >= ${options.fromSeq} AND m.seq < ${options.beforeSeq}
    ), matches AS (
      SELECT c.seq, u.lexeme, coalesce(cardinality(u.positions), 1)::float8 AS tf, length(c.v)::float8 AS len
      FROM cand c, unnest(c.v) u WHERE u.lexeme IN (SELECT lexeme FROM terms)
    ), df AS (
      SELECT lexeme, count(*)::float8 AS n FROM matches GROUP BY lexeme
    ), corpus AS (
      SELECT greatest((SELECT last_seq FROM threads WHERE id = ${options.threadId}), 1)::float8 AS n,
        greatest((SELECT avg(length(v)) FROM cand), 1)::float8 AS avgdl
    ), scored AS (
      SELECT m.seq, sum(ln(1 + (corpus.n - df.n + 0.5) / (df.n + 0.5)) * m.tf * ${K1 + 1}::float8
        / (m.tf + ${K1}::float8 * (1 - ${B}::float8 + ${B}::float8 * m.len / corpus.avgdl))) AS score
      FROM matches m JOIN df USING (lexeme), corpus GROUP BY m.seq
    ), smoothed AS (
      SELECT s.seq, s.score + ${NEIGHBOUR_SHARE}::float8 * greatest(coalesce(p.score, 0), coalesce(n.score, 0)) AS score
      FROM scored s LEFT JOIN scored p ON p.seq = s.seq - 1 LEFT JOIN scored n ON n.seq = s.seq + 1
    )
    SELECT seq, score FROM smoothed WHERE seq <> ALL (coalesce(${exclude}, '{}'::int[]))
    ORDER BY score DESC, seq DESC LIMIT ${options.limit}`;
}
