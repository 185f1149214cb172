import { Prisma, type Message as MessageRow, type Turn as TurnRow } from './generated/client';
import { storableJson } from './storable-values';

/**
 * Column lists for the hot path's raw SQL, aliased to the Prisma field names so raw rows go through the same
 * mappers (src/db/mappers.ts) as ORM rows. Keep them in step with prisma/schema.prisma.
 */

export const MESSAGE_COLUMNS = Prisma.raw(`id, thread_id AS "threadId", seq, role, content, tool_calls AS "toolCalls",
  tool_call_id AS "toolCallId", status, error, tokens, encoding, client_message_id AS "clientMessageId", turn_id AS "turnId",
  tool_run_id AS "toolRunId", pinned, superseded, deleted_at AS "deletedAt", created_at AS "createdAt",
  updated_at AS "updatedAt", completed_at AS "completedAt"`);

export const TURN_COLUMNS =
  Prisma.raw(`id, thread_id AS "threadId", kind, user_message_id AS "userMessageId", status, error,
  created_at AS "createdAt", started_at AS "startedAt", finished_at AS "finishedAt"`);

export const THREAD_COLUMNS =
  Prisma.raw(`id, owner_id AS "ownerId", title, created_at AS "createdAt", updated_at AS "updatedAt",
  last_activity_at AS "lastActivityAt", last_seq AS "lastSeq", summary_text AS "summaryText", summary_tokens AS "summaryTokens",
  summary_encoding AS "summaryEncoding", summary_covered_through_seq AS "summaryCoveredThroughSeq",
  summary_revision AS "summaryRevision", summary_segment_ends AS "summarySegmentEnds", context_start_seq AS "contextStartSeq", memory_mode AS "memoryMode", settings, version,
  last_fold_at AS "lastFoldAt", last_fold_error AS "lastFoldError", lease_owner AS "leaseOwner",
  lease_expires_at AS "leaseExpiresAt", forked_from_thread_id AS "forkedFromThreadId", forked_from_seq AS "forkedFromSeq"`);

/** `columns` with every name qualified by `alias` (for joins). */
export function qualified(columns: Prisma.Sql, alias: string): Prisma.Sql {
  const text = columns.sql.replace(
    /(^|,\s*)([a-z_]+)/g,
    (_, separator: string, name: string) => `${separator}${alias}.${name}`,
  );
  return Prisma.raw(text);
}

/**
 * JSON.stringify writes NUL and a lone surrogate only as escapes (`\u0000`, `\ud800`–`\udfff`); a text without one
 * needs no storable copy (an escaped backslash before such letters only sends a value the long way round).
 */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i;

/** A nullable JSON parameter for a jsonb column (NUL and lone surrogates stored as U+FFFD, storable-values.ts). */
export function jsonParameter(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const text = JSON.stringify(value);
  // The hot path's values hold neither: the copy is made only for the rare one that does.
  return UNSTORABLE_ESCAPE.test(text) ? JSON.stringify(storableJson(value)) : text;
}

/**
 * A FROM item that turns off the wait for the WAL flush at this statement's commit (`synchronous_commit` for
 * this transaction only). For bookkeeping writes whose loss in a Postgres crash leaves an earlier consistent state
 * that the turn runner and the sweeper already recover from (a lease, a turn's start, a streaming placeholder, a
 * call record). WAL is replayed in order, so the next synchronous commit makes every earlier one durable too.
 */
export const ASYNC_COMMIT = Prisma.raw(`(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit`);

const camel = (name: string): string => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/**
 * A row a SQL function returned as JSON (`to_json(row)`: column names, timestamps as text) with Prisma's field names
 * and Dates, for the same mappers as ORM rows. Columns the domain never reads (the search vector) are left out.
 */
function rowFromJson(json: Record<string, unknown>, dates: readonly string[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) if (key !== 'search_vector') row[camel(key)] = value;
  for (const key of dates) row[key] = typeof row[key] === 'string' ? new Date(row[key]) : (row[key] ?? null);
  return row;
}

export const messageFromJson = (json: Record<string, unknown>): MessageRow =>
  rowFromJson(json, ['deletedAt', 'createdAt', 'updatedAt', 'completedAt']) as unknown as MessageRow;

export const turnFromJson = (json: Record<string, unknown>): TurnRow =>
  rowFromJson(json, ['createdAt', 'startedAt', 'finishedAt']) as unknown as TurnRow;
