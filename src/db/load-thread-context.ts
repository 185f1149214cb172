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
  encoding: string;
}

function toEntryFromJson(json: EntryJson): ContextEntry {
  const entry: ContextEntry = { seq: json.seq, role: json.role, content: json.content, tokens: json.tokens };
  if (Array.isArray(json.toolCalls)) entry.toolCalls = json.toolCalls;
  if (json.toolCallId) entry.toolCallId = json.toolCallId;
  if (json.pinned) entry.pinned = true;
  if (json.encoding === 'o200k_base' || json.encoding === 'cl100k_base') entry.tokenEncoding = json.encoding;
  return entry;
}

/**
 * The thread and its context (pinned entries and the window) in one statement, so one
 * consistent snapshot: a fold committing meanwhile is seen whole or not at all. Its cost does not depend on the
 * transcript's length, only on the window's.
 */
export async function loadThreadContext(db: Database, threadId: string): Promise<ThreadContext | null> {
  const rows = await db.$queryRaw<(ThreadRow & { entries: EntryJson[] })[]>`
    SELECT ${THREAD_COLUMNS},
      (SELECT coalesce(json_agg(json_build_object('seq', e.seq, 'role', e.role, 'content', e.content, 'tokens', e.tokens,
          'toolCalls', e.tool_calls, 'toolCallId', e.tool_call_id, 'pinned', e.pinned, 'encoding', e.encoding) ORDER BY e.seq), '[]'::json)
        FROM context_entries e
        -- Folded entries are deleted by the fold's commit, so every unpinned entry left is in the window: including
        -- one unpinned after the summary passed it, which stays there until the next fold takes it.
        WHERE e.thread_id = t.id AND e.seq >= t.context_start_seq
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
