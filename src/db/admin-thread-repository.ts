import type { AdminThreadRow, AdminThreadSort, AdminThreadStore, FoldLagPolicy, Page } from '../core/ports';
import { Prisma } from './generated/client';
import type { Database } from './prisma-client';
import { invalidCursor, UUID } from './keyset-cursor';

interface Row {
  id: string;
  title: string;
  owner_id: string;
  owner_kind: string;
  created_at: Date;
  last_activity_at: Date;
  memory_mode: string;
  message_count: number;
  summary_preview: string;
  summary_tokens: number;
  summary_revision: number;
  covered_through_seq: number;
  window_entries: number;
  window_tokens: number;
  fold_lag: number;
  last_fold_at: Date | null;
  last_fold_error: string | null;
  sort_key: number;
}

/** Characters of the summary shown in the list. */
const PREVIEW_CHARACTERS = 240;

/** Keyset cursor: the sort key, the activity time and the id of the last row of a page. */
interface Cursor {
  key: number;
  at: Date;
  id: string;
}

function encodeCursor(row: Row): string {
  return Buffer.from(
    JSON.stringify({ key: row.sort_key, at: row.last_activity_at.toISOString(), id: row.id }),
  ).toString('base64url');
}

/** Decodes a cursor of `encodeCursor`; anything else is a VALIDATION error (400). */
function decodeCursor(cursor: string): Cursor {
  let value: { key?: unknown; at?: unknown; id?: unknown } | null;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as {
      key?: unknown;
      at?: unknown;
      id?: unknown;
    } | null;
  } catch {
    throw invalidCursor();
  }
  const at = new Date(String(value?.at));
  if (typeof value?.key !== 'number' || !Number.isFinite(value.key) || Number.isNaN(at.getTime()))
    throw invalidCursor();
  if (typeof value.id !== 'string' || !UUID.test(value.id)) throw invalidCursor();
  return { key: value.key, at, id: value.id };
}

/** The primary sort key of each sort (descending; `lag` is the fold lag); ties go by activity, then id. */
const SORT_KEYS: Record<Exclude<AdminThreadSort, 'lag'>, Prisma.Sql> = {
  activity: Prisma.sql`0`,
  summary: Prisma.sql`t.summary_tokens`,
  errors: Prisma.sql`CASE WHEN t.last_fold_error IS NULL THEN 0 ELSE 1 END`,
};

/**
 * Entries waiting to be folded, as the sweeper sees them under the deployment's policy: while the trigger fires,
 * the window entries older than what the keep policy keeps (counted newest first; exchange-block boundaries are
 * ignored, so it can differ from the fold's exact cut by the size of one block). Zero while the trigger does not fire.
 */
function foldLagSql(policy: FoldLagPolicy): Prisma.Sql {
  return Prisma.sql`CASE WHEN t.memory_mode = 'summary'
    AND (w.window_tokens + t.summary_tokens >= ${policy.minWindowTokens} OR w.window_entries >= ${policy.minWindowMessages})
    THEN w.beyond_keep ELSE 0 END`;
}

function beyondKeepSql(policy: FoldLagPolicy): Prisma.Sql {
  return policy.keep.kind === 'messages'
    ? Prisma.sql`row_number() OVER newest > ${policy.keep.value}`
    : Prisma.sql`sum(e.tokens) OVER newest > ${policy.keep.value}`;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

function toAdminThread(row: Row): AdminThreadRow {
  return {
    id: row.id,
    title: row.title,
    ownerId: row.owner_id,
    ownerKind: row.owner_kind === 'external' ? 'external' : 'guest',
    createdAt: row.created_at,
    lastActivityAt: row.last_activity_at,
    memoryMode: row.memory_mode === 'window-only' ? 'window-only' : 'summary',
    messageCount: row.message_count,
    summaryPreview: row.summary_preview,
    summaryTokens: row.summary_tokens,
    summaryRevision: row.summary_revision,
    coveredThroughSeq: row.covered_through_seq,
    windowEntries: row.window_entries,
    windowTokens: row.window_tokens,
    foldLagEntries: row.fold_lag,
    lastFoldAt: row.last_fold_at,
    lastFoldError: row.last_fold_error,
  };
}

export function createAdminThreadRepository(db: Database): AdminThreadStore {
  return {
    /** One query: threads with their owner, message count and window aggregates (per thread, through LATERAL joins). */
    async listThreads({ query, cursor, limit, sort, policy }): Promise<Page<AdminThreadRow>> {
      const lag = foldLagSql(policy);
      const sortKey = sort === 'lag' ? lag : SORT_KEYS[sort];
      const after = cursor ? decodeCursor(cursor) : null;
      const search = query?.trim();
      const rows = await db.$queryRaw<Row[]>`
        SELECT * FROM (
          SELECT t.id::text AS id, t.title, t.owner_id, u.kind AS owner_kind, t.created_at, t.last_activity_at, t.memory_mode,
            left(t.summary_text, ${PREVIEW_CHARACTERS}) AS summary_preview, t.summary_tokens, t.summary_revision,
            t.summary_covered_through_seq AS covered_through_seq, t.last_fold_at, t.last_fold_error,
            m.message_count, w.window_entries, w.window_tokens,
            (${lag})::int AS fold_lag,
            (${sortKey})::int AS sort_key
          FROM threads t
          JOIN users u ON u.id = t.owner_id
          CROSS JOIN LATERAL (SELECT count(*)::int AS message_count FROM messages WHERE thread_id = t.id) m
          CROSS JOIN LATERAL (
            SELECT count(*)::int AS window_entries, coalesce(sum(x.tokens), 0)::int AS window_tokens,
              (count(*) FILTER (WHERE x.beyond))::int AS beyond_keep
            FROM (
              SELECT e.tokens, ${beyondKeepSql(policy)} AS beyond
              FROM context_entries e
              WHERE e.thread_id = t.id AND e.pinned = false AND e.seq > t.summary_covered_through_seq AND e.seq >= t.context_start_seq
              WINDOW newest AS (ORDER BY e.seq DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
            ) x
          ) w
          ${search ? Prisma.sql`WHERE t.title ILIKE ${`%${escapeLike(search)}%`} OR t.owner_id ILIKE ${`%${escapeLike(search)}%`} OR t.id::text = ${search.toLowerCase()}` : Prisma.empty}
        ) listed
        ${after ? Prisma.sql`WHERE (sort_key, last_activity_at, id) < (${after.key}::int, ${after.at}::timestamptz, ${after.id})` : Prisma.empty}
        ORDER BY sort_key DESC, last_activity_at DESC, id DESC
        LIMIT ${limit + 1}`;
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      return { items: items.map(toAdminThread), nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
    },

    async transcriptSize(threadId) {
      const [row] = await db.$queryRaw<{ messages: number; tokens: number; characters: bigint; last_seq: number }[]>`
        SELECT count(m.id)::int AS messages, coalesce(sum(m.tokens), 0)::int AS tokens,
          coalesce(sum(length(m.content)), 0)::bigint AS characters, t.last_seq
        FROM threads t LEFT JOIN messages m ON m.thread_id = t.id
        WHERE t.id = ${threadId}::uuid
        GROUP BY t.id`;
      return {
        messages: row?.messages ?? 0,
        tokens: row?.tokens ?? 0,
        characters: Number(row?.characters ?? 0),
        lastSeq: row?.last_seq ?? 0,
      };
    },
  };
}
