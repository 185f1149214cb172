import type { ElsewhereMatch, MessageSearchHit, TranscriptMatch, TranscriptSearch } from '../core/ports';
import type { Database } from './prisma-client';
import { Prisma } from './generated/client';
import { prepared } from './prepared-statement';
import { elsewhereRankedSql, QUERY_MAX_CHARS, rankedSeqsSql, SEARCH_CONFIG } from './search-sql';

/** Snippet markers ts_headline puts around matched words (control characters no message text carries). */
const START = '\u0001';
const STOP = '\u0002';
/** ts_headline reads at most this much of a message (it parses the whole text it is given). */
const HEADLINE_MAX_CHARS = 20_000;
/** Text of a match given to the model; the tool cuts it further to its token room. */
const MATCH_MAX_CHARS = 8000;

interface MatchRow {
  messageId: string;
  seq: number;
  role: string;
  content: string;
  createdAt: Date;
  score: number;
}

const toMatch = (row: MatchRow): TranscriptMatch => ({
  messageId: row.messageId,
  seq: row.seq,
  role: row.role as TranscriptMatch['role'],
  content: row.content,
  createdAt: row.createdAt,
  score: Number(row.score),
});

/** The snippet without its markers, and where the markers were. */
export function parseHeadline(marked: string): { snippet: string; highlights: { start: number; end: number }[] } {
  let snippet = '';
  const highlights: { start: number; end: number }[] = [];
  let open: number | null = null;
  for (const character of marked) {
    if (character === START) open = snippet.length;
    else if (character === STOP) {
      if (open !== null && snippet.length > open) highlights.push({ start: open, end: snippet.length });
      open = null;
    } else snippet += character;
  }
  return { snippet, highlights };
}

const FRAGMENT_DELIMITER = ' … ';
const EDGE_CHARACTERS = 200;
const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * The snippet with "… " before it when it starts inside the message and " …" after it when the message goes on, so a
 * snippet that begins mid-sentence says so. `head` and `tail` are the message's first and last characters (the part
 * ts_headline read); highlights shift with the leading ellipsis.
 */
export function withEllipses(
  headline: { snippet: string; highlights: { start: number; end: number }[] },
  edges: { head: string; tail: string },
): { snippet: string; highlights: { start: number; end: number }[] } {
  const fragments = headline.snippet.split(FRAGMENT_DELIMITER);
  const first = squash(fragments[0] ?? '');
  const last = squash(fragments.at(-1) ?? '');
  const atStart = squash(edges.head).startsWith(first.slice(0, 40));
  const atEnd = squash(edges.tail).endsWith(last.slice(-40));
  const lead = atStart ? '' : '… ';
  return {
    snippet: `${lead}${headline.snippet}${atEnd ? '' : ' …'}`,
    highlights: headline.highlights.map(({ start, end }) => ({ start: start + lead.length, end: end + lead.length })),
  };
}

/**
 * The statement of `searchForModel`: the best matches of the thread's ranking (src/db/search-sql.ts) with their text.
 * Exported for bench:recall, which times this very statement inside Postgres.
 */
export function modelSearchSql({
  threadId,
  query,
  limit,
  beforeSeq,
}: Parameters<TranscriptSearch['searchForModel']>[0]): Prisma.Sql {
  const ranked = rankedSeqsSql({
    threadId: Prisma.sql`${threadId}::uuid`,
    query: Prisma.sql`${query}::text`,
    fromSeq: Prisma.sql`(SELECT context_start_seq FROM threads WHERE id = ${threadId}::uuid)`,
    beforeSeq: beforeSeq !== undefined ? Prisma.sql`${beforeSeq}::int` : Prisma.sql`2147483647`,
    limit: Prisma.sql`${limit}::int`,
  });
  return prepared(
    'search_for_model',
    Prisma.sql`
    SELECT m.id AS "messageId", m.seq, m.role, left(m.content, ${MATCH_MAX_CHARS}::int) AS content, m.created_at AS "createdAt", r.score
    FROM (${ranked}) r JOIN messages m ON m.thread_id = ${threadId}::uuid AND m.seq = r.seq
    ORDER BY r.score DESC, r.seq DESC`,
  );
}

export function createSearchRepository(db: Database): TranscriptSearch {
  return {
    async searchForModel(input) {
      const rows = await db.sql.rows<MatchRow>(modelSearchSql(input));
      return rows.map(toMatch);
    },

    async searchElsewhere({ threadId, query, limit, defaultScope }) {
      const ranked = elsewhereRankedSql({
        threadId: Prisma.sql`${threadId}::uuid`,
        query: Prisma.sql`${query}::text`,
        limit: Prisma.sql`${limit}::int`,
      });
      const rows = await db.sql.rows<MatchRow & { threadId: string; threadTitle: string }>(
        prepared(
          'search_elsewhere',
          Prisma.sql`
        SELECT r.id AS "messageId", r.thread_id AS "threadId", r.title AS "threadTitle", r.seq, r.role,
          left(r.content, ${MATCH_MAX_CHARS}::int) AS content, r.created_at AS "createdAt", r.score
        FROM (${ranked}) r
        WHERE coalesce((SELECT settings->>'recallScope' FROM threads WHERE id = ${threadId}::uuid), ${defaultScope}::text) = 'user'
        ORDER BY r.score DESC`,
        ),
      );
      return rows.map((row): ElsewhereMatch => ({
        ...toMatch(row),
        threadId: row.threadId,
        threadTitle: row.threadTitle,
      }));
    },

    async messagesAt({ threadId, seqs }) {
      if (seqs.length === 0) return [];
      const rows = await db.$queryRaw<MatchRow[]>`
        SELECT m.id AS "messageId", m.seq, m.role, left(m.content, ${MATCH_MAX_CHARS}::int) AS content, m.created_at AS "createdAt", 0::float8 AS score
        FROM messages m JOIN threads t ON t.id = m.thread_id
        WHERE m.thread_id = ${threadId}::uuid AND m.seq = ANY(${seqs}::int[]) AND m.seq >= t.context_start_seq
          AND m.status = 'complete' AND NOT m.superseded AND m.deleted_at IS NULL
        ORDER BY m.seq`;
      return rows.map(toMatch);
    },

    async searchForPeople({ ownerId, threadId, query, limit, offset }) {
      // People type search-box queries: every word must match (websearch syntax: "a phrase", -word, or).
      const rows = await db.$queryRaw<
        (Omit<MessageSearchHit, 'snippet' | 'highlights'> & { marked: string; head: string; tail: string })[]
      >`
        WITH q AS (SELECT websearch_to_tsquery(${SEARCH_CONFIG}, left(${query}::text, ${QUERY_MAX_CHARS}::int)) AS q),
        hits AS (
          SELECT m.id, m.thread_id, m.seq, m.role, m.created_at, m.content, m.origin_message_id IS NOT NULL AS fork_copy,
            ts_rank_cd(m.search_vector, q.q) AS rank
          FROM messages m JOIN threads t ON t.id = m.thread_id, q
          WHERE t.owner_id = ${ownerId} AND (${threadId ?? null}::uuid IS NULL OR m.thread_id = ${threadId ?? null}::uuid)
            AND m.search_vector @@ q.q AND m.status = 'complete' AND NOT m.superseded AND m.deleted_at IS NULL
          ORDER BY rank DESC, m.created_at DESC, m.id
          LIMIT ${limit + 1}::int OFFSET ${offset}::int
        )
        SELECT h.thread_id AS "threadId", t.title AS "threadTitle", h.id AS "messageId", h.seq, h.role, h.created_at AS "createdAt",
          h.fork_copy AS "forkCopy",
          ts_headline(${SEARCH_CONFIG}, left(h.content, ${HEADLINE_MAX_CHARS}::int), q.q,
            'StartSel=' || chr(1) || ', StopSel=' || chr(2) || ', MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "') AS marked,
          left(h.content, ${EDGE_CHARACTERS}::int) AS head, right(left(h.content, ${HEADLINE_MAX_CHARS}::int), ${EDGE_CHARACTERS}::int) AS tail
        FROM hits h JOIN threads t ON t.id = h.thread_id, q
        ORDER BY h.rank DESC, h.created_at DESC, h.id`;
      const hits = rows.slice(0, limit).map(({ marked, head, tail, ...row }): MessageSearchHit => ({
        ...row,
        role: row.role,
        ...withEllipses(parseHeadline(marked), { head, tail }),
      }));
      return { hits, hasMore: rows.length > limit };
    },
  };
}
