import type { ContextEntry } from '../core/context/types';
import type { ThreadContext } from '../core/domain';
import type { Message as MessageRow, Thread as ThreadRow } from './generated/client';
import type { Database } from './prisma-client';
import { toThread } from './mappers';
import { THREAD_COLUMNS } from './sql-columns';

interface EntryJson {
  seq: number;
  role: ContextEntry['role'];
  content: string;
  tokens: number;
  toolCalls: ContextEntry['toolCalls'] | null;
  toolCallId: string | null;
  pinned: boolean;
}

function toEntryFromJson(json: EntryJson): ContextEntry {
  const entry: ContextEntry = { seq: json.seq, role: json.role, content: json.content, tokens: json.tokens };
  if (Array.isArray(json.toolCalls)) entry.toolCalls = json.toolCalls;
  if (json.toolCallId) entry.toolCallId = json.toolCallId;
  if (json.pinned) entry.pinned = true;
  return entry;
}

/**
 * The thread and its context (pinned entries and the window after the summary) in one statement, so one
 * consistent snapshot: a fold committing meanwhile is seen whole or not at all. Its cost does not depend on the
 * transcript's length, only on the window's.
 */
export async function loadThreadContext(db: Database, threadId: string): Promise<ThreadContext | null> {
  const rows = await db.$queryRaw<(ThreadRow & { entries: EntryJson[] })[]>`
    SELECT ${THREAD_COLUMNS},
      (SELECT coalesce(json_agg(json_build_object('seq', e.seq, 'role', e.role, 'content', e.content, 'tokens', e.tokens,
          'toolCalls', e.tool_calls, 'toolCallId', e.tool_call_id, 'pinned', e.pinned) ORDER BY e.seq), '[]'::json)
        FROM context_entries e
        WHERE e.thread_id = t.id AND e.seq >= t.context_start_seq
          AND (e.pinned OR e.seq > CASE WHEN t.summary_revision > 0 OR t.summary_text <> '' THEN t.summary_covered_through_seq ELSE 0 END)
      ) AS entries
    FROM threads t WHERE t.id = ${threadId}::uuid`;
  const row = rows[0];
  if (!row) return null;
  const { entries, ...threadRow } = row;
  const all = entries.map(toEntryFromJson);
  return {
    thread: toThread(threadRow),
    window: all.filter((entry) => !entry.pinned),
    pinned: all.filter((entry) => entry.pinned),
  };
}

const MESSAGE_DATES = ['deletedAt', 'createdAt', 'updatedAt', 'completedAt'] as const;

/** A message row that went through `row_to_json` (camelCase aliases): its timestamps back to Dates. */
export function reviveMessageRow(json: Record<string, unknown>): MessageRow {
  const row = { ...json } as Record<string, unknown>;
  for (const key of MESSAGE_DATES) row[key] = typeof json[key] === 'string' ? new Date(json[key]) : null;
  return row as unknown as MessageRow;
}
