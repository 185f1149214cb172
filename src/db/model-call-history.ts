import type { ModelCallHistory } from '../core/ports';
import type { ModelCallPointDto } from '../shared/api';
import type { Database } from './prisma-client';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';

interface CallRow {
  id: string;
  created_at: Date;
  purpose: string;
  model: string;
  message_id: string | null;
  estimated_prompt_tokens: number;
  reported_prompt_tokens: number | null;
  reported_cached_tokens: number | null;
  reported_cache_write_tokens: number | null;
  tool_schema_tokens: number | null;
  transcript_tokens: number;
  through_seq: number;
}

/** Cursor over (created_at desc, id desc), opaque to clients. */
function encodeCursor(row: { created_at: Date; id: string }): string {
  return encodeKeysetCursor({ at: row.created_at, id: row.id });
}

function toPoint(row: CallRow): ModelCallPointDto {
  const reported = row.reported_prompt_tokens !== null && row.reported_prompt_tokens > 0;
  return {
    id: row.id,
    at: row.created_at.toISOString(),
    purpose: row.purpose as ModelCallPointDto['purpose'],
    model: row.model,
    messageId: row.message_id,
    promptTokens: reported ? (row.reported_prompt_tokens ?? 0) : row.estimated_prompt_tokens,
    promptTokensSource: reported ? 'provider' : 'estimate',
    estimatedPromptTokens: row.estimated_prompt_tokens,
    transcriptTokens: row.transcript_tokens,
    throughSeq: row.through_seq,
    reportedCachedTokens: row.reported_cached_tokens,
    reportedCacheWriteTokens: row.reported_cache_write_tokens,
    toolSchemaTokens: row.tool_schema_tokens,
  };
}

/**
 * Each call with the transcript as it stood when the call was made, in one pass over the thread: messages and calls
 * are merged on one time line and a running sum (a window function) gives, at each call, the tokens of every
 * message completed before it. A chat call stands where its answer started (its record is written when the answer
 * ends); other calls (summaries, condensing) where they were recorded.
 */
export function createModelCallHistory(db: Database): ModelCallHistory {
  return {
    async recentPromptCounts({ model, limit }) {
      const rows = await db.$queryRaw<{ estimated: number; reported: number; ownerId: string | null }[]>`
        SELECT estimated, reported, user_id AS "ownerId" FROM (
          SELECT estimated_prompt_tokens AS estimated, reported_prompt_tokens AS reported, created_at, user_id
          FROM model_calls
          WHERE model = ${model} AND purpose = 'chat' AND reported_prompt_tokens > 0 AND error IS NULL
          ORDER BY created_at DESC LIMIT ${limit}
        ) recent ORDER BY created_at`;
      return rows;
    },

    async listForThread({ threadId, before, limit }) {
      // A cursor this server did not hand out is a 400 (its id reaches a ::uuid cast below).
      const cursor = before ? decodeKeysetCursor(before) : null;
      const rows = await db.$queryRaw<CallRow[]>`
        WITH timeline AS (
          SELECT coalesce(m.completed_at, m.created_at) AS at, 0 AS kind, m.tokens, m.seq, NULL::uuid AS call_id
          FROM messages m WHERE m.thread_id = ${threadId}::uuid AND m.seq IS NOT NULL
          UNION ALL
          SELECT coalesce(answered.created_at, c.created_at), 1, 0, NULL, c.id
          FROM model_calls c LEFT JOIN messages answered ON answered.id = c.message_id
          WHERE c.thread_id = ${threadId}::uuid
        ), running AS (
          SELECT call_id,
            (sum(tokens) OVER past)::int AS transcript_tokens,
            coalesce(max(seq) OVER past, 0)::int AS through_seq
          FROM timeline
          WINDOW past AS (ORDER BY at, kind ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
        )
        SELECT c.id, c.created_at, c.purpose, c.model, c.message_id, c.estimated_prompt_tokens, c.reported_prompt_tokens,
          c.reported_cached_tokens, c.reported_cache_write_tokens, (c.token_parts->>'toolSchemas')::int AS tool_schema_tokens,
          r.transcript_tokens, r.through_seq
        FROM running r JOIN model_calls c ON c.id = r.call_id
        WHERE ${cursor === null}::boolean OR (c.created_at, c.id) < (${cursor?.at ?? new Date(0)}::timestamptz, ${cursor?.id ?? '00000000-0000-0000-0000-000000000000'}::uuid)
        ORDER BY c.created_at DESC, c.id DESC
        LIMIT ${limit + 1}`;
      const page = rows.slice(0, limit);
      const oldest = page.at(-1);
      return {
        calls: page.reverse().map(toPoint),
        nextCursor: rows.length > limit && oldest ? encodeCursor(oldest) : null,
      };
    },
  };
}
