import { Prisma } from './generated/client';
import type { ModelUsage } from '../core/costs/estimate-costs';
import type { CostGrouping, CostReport, UsageGroup } from '../core/ports';
import type { Database } from './prisma-client';

interface UsageRow {
  total: boolean;
  key: string;
  label: string;
  model: string;
  calls: number;
  prompt_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  completion_tokens: number;
  estimated_calls: number;
  cache_reported_prompt_tokens: number;
  cache_reported_cached_tokens: number;
}

/** The label of the row holding the calls of deleted threads (and of calls of no thread) in the costs by thread. */
export const DELETED_THREAD_LABEL = '(deleted thread)';

/** How each grouping keys and labels a call; days are those of `timeZone` (SPEND_LIMIT_TIMEZONE, the spend periods'). */
function groupsIn(timeZone: string): Record<CostGrouping, { key: Prisma.Sql; label: Prisma.Sql }> {
  const day = Prisma.sql`to_char(c.created_at AT TIME ZONE ${timeZone}::text, 'YYYY-MM-DD')`;
  return {
    day: { key: day, label: day },
    // The user a call row names (written with it): a deleted thread's calls stay with their user; anonymised calls
    // (erasure, RETENTION_DAYS) are one row of their own.
    user: { key: Prisma.sql`coalesce(c.user_id, '')`, label: Prisma.sql`coalesce(c.user_id, '(erased user)')` },
    // The calls of every deleted thread are one row (their thread id is gone with the thread).
    thread: {
      key: Prisma.sql`coalesce(c.thread_id::text, '')`,
      label: Prisma.sql`coalesce(t.title, ${DELETED_THREAD_LABEL})`,
    },
  };
}

/** Cached prompt tokens as the provider reported them (0 where it reported none), priced at the cached input price. */
const REPORTED_CACHED_TOKENS = Prisma.sql`coalesce(c.reported_cached_tokens, 0)`;
/** The provider reported both the call's prompt tokens and its cached ones: the call counts in the cached share. */
const CACHE_REPORTED = Prisma.sql`(nullif(c.reported_prompt_tokens, 0) IS NOT NULL AND c.reported_cached_tokens IS NOT NULL)`;

function toModelUsage(row: UsageRow): ModelUsage {
  return {
    model: row.model,
    calls: row.calls,
    promptTokens: Number(row.prompt_tokens),
    cachedTokens: Number(row.cached_tokens),
    cacheWriteTokens: Number(row.cache_write_tokens),
    completionTokens: Number(row.completion_tokens),
    estimatedCalls: row.estimated_calls,
    cacheReportedPromptTokens: Number(row.cache_reported_prompt_tokens),
    cacheReportedCachedTokens: Number(row.cache_reported_cached_tokens),
  };
}

/**
 * Reported usage where the provider reported it: prompt tokens (our estimate where none was reported), cached prompt
 * tokens (0 where none were reported), completion tokens (the answer's counted tokens where none were reported, kept
 * on the call row when the answer went with its thread); and,
 * for the cached share, the prompt and cached tokens of the calls that reported both.
 */
export function createCostReport(db: Database, options: { timeZone?: string } = {}): CostReport {
  const groupings = groupsIn(options.timeZone ?? 'UTC');
  return {
    async usageBy({ by, since, limit }) {
      const group = groupings[by];
      const rows = await db.$queryRaw<UsageRow[]>`
        WITH calls AS (
          SELECT ${group.key} AS key, ${group.label} AS label, c.model,
            coalesce(nullif(c.reported_prompt_tokens, 0), c.estimated_prompt_tokens) AS prompt_tokens,
            ${REPORTED_CACHED_TOKENS} AS cached_tokens,
            coalesce(c.reported_cache_write_tokens, 0) AS cache_write_tokens,
            coalesce(c.reported_completion_tokens, m.tokens, c.estimated_completion_tokens, 0) AS completion_tokens,
            (nullif(c.reported_prompt_tokens, 0) IS NULL OR c.reported_completion_tokens IS NULL) AS estimated,
            CASE WHEN ${CACHE_REPORTED} THEN c.reported_prompt_tokens ELSE 0 END AS cache_reported_prompt_tokens,
            CASE WHEN ${CACHE_REPORTED} THEN least(c.reported_cached_tokens, c.reported_prompt_tokens) ELSE 0 END AS cache_reported_cached_tokens
          FROM model_calls c
          LEFT JOIN threads t ON t.id = c.thread_id
          LEFT JOIN messages m ON m.id = c.message_id
          WHERE c.created_at >= ${since}
        ), grouped AS (
          SELECT key, min(label) AS label, model, count(*)::int AS calls, sum(prompt_tokens)::bigint AS prompt_tokens,
            sum(cached_tokens)::bigint AS cached_tokens, sum(cache_write_tokens)::bigint AS cache_write_tokens, sum(completion_tokens)::bigint AS completion_tokens,
            count(*) FILTER (WHERE estimated)::int AS estimated_calls,
            sum(cache_reported_prompt_tokens)::bigint AS cache_reported_prompt_tokens, sum(cache_reported_cached_tokens)::bigint AS cache_reported_cached_tokens
          FROM calls GROUP BY key, model
        ), ranked AS (
          SELECT key FROM grouped GROUP BY key ORDER BY sum(prompt_tokens) DESC, key LIMIT ${limit}
        )
        SELECT false AS total, g.key, g.label, g.model, g.calls, g.prompt_tokens::float8 AS prompt_tokens, g.cached_tokens::float8 AS cached_tokens,
          g.cache_write_tokens::float8 AS cache_write_tokens,
          g.completion_tokens::float8 AS completion_tokens, g.estimated_calls,
          g.cache_reported_prompt_tokens::float8 AS cache_reported_prompt_tokens, g.cache_reported_cached_tokens::float8 AS cache_reported_cached_tokens
        FROM grouped g JOIN ranked r ON r.key = g.key
        UNION ALL
        SELECT true, '', '', model, sum(calls)::int, sum(prompt_tokens)::float8, sum(cached_tokens)::float8,
          sum(cache_write_tokens)::float8,
          sum(completion_tokens)::float8, sum(estimated_calls)::int,
          sum(cache_reported_prompt_tokens)::float8, sum(cache_reported_cached_tokens)::float8
        FROM grouped GROUP BY model
        ORDER BY total, key, model`;
      const groups = new Map<string, UsageGroup>();
      const total: ModelUsage[] = [];
      for (const row of rows) {
        if (row.total) {
          total.push(toModelUsage(row));
          continue;
        }
        const entry = groups.get(row.key) ?? { key: row.key, label: row.label, usage: [] };
        entry.usage.push(toModelUsage(row));
        groups.set(row.key, entry);
      }
      return { groups: [...groups.values()], total };
    },
  };
}
