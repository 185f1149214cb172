import type { ContextEntry, RecalledMessage, SavedMemoryItem } from '../core/context/types';
import type { ThreadContext } from '../core/domain/types';
import type { Thread as ThreadRow } from './generated/client';
import type { Database } from './prisma-client';
import { toThread } from './mappers';
import { Prisma } from './generated/client';
import { prepared } from './prepared-statement';
import { ELSEWHERE_RECALL_CHATS, elsewhereRankedSql, rankedSeqsSql } from './search-sql';
import { THREAD_COLUMNS } from './sql-columns';

/** Auto-recall candidates read per call (the pack keeps those that fit its slot). */
export const RECALL_CANDIDATES = 12;
/** Cross-thread candidates read per call (the user's other threads), merged with this thread's on their score. */
export const RECALL_ELSEWHERE_CANDIDATES = 6;
/** Characters of a candidate read (the pack cuts longer ones further). */
const RECALL_CANDIDATE_MAX_CHARS = 1500;
/** Characters of the answer the user message replies to that join the recall query. */
const RECALL_ANSWER_QUERY_CHARS = 1000;

interface RecalledJson {
  seq: number;
  role: RecalledMessage['role'];
  content: string;
  createdAt: string;
  score?: number;
  threadId?: string;
  title?: string;
}

function toRecalled(json: RecalledJson): RecalledMessage {
  return {
    seq: json.seq,
    role: json.role,
    content: json.content,
    createdAt: new Date(json.createdAt),
    ...(json.score !== undefined ? { score: Number(json.score) } : {}),
    ...(json.threadId !== undefined ? { thread: { id: json.threadId, title: json.title ?? '' } } : {}),
  };
}

/**
 * Auto-recall of the thread `t` (a subquery of the context read): its newest user entry in the window and the answer
 * before it are the query; candidates are older than the window, from the context start on, not pinned. Evaluated
 * only when the thread's recall slot (its setting, else `defaultTokens`) is above 0.
 */
function recallSql(defaultTokens: number): Prisma.Sql {
  const windowEntries = Prisma.sql`context_entries w WHERE w.thread_id = t.id AND NOT w.pinned AND w.seq >= t.context_start_seq`;
  const newestUser = Prisma.sql`(SELECT max(w.seq) FROM ${windowEntries} AND w.role = 'user')`;
  const query = Prisma.sql`coalesce((SELECT w.content FROM ${windowEntries} AND w.seq = ${newestUser}), '')`;
  const answer = Prisma.sql`coalesce((SELECT left(w.content, ${RECALL_ANSWER_QUERY_CHARS}::int) FROM ${windowEntries} AND w.role = 'assistant' AND w.seq < ${newestUser} AND w.content <> ''
      ORDER BY w.seq DESC LIMIT 1), '')`;
  const ranked = rankedSeqsSql({
    threadId: Prisma.sql`t.id`,
    query,
    context: answer,
    fromSeq: Prisma.sql`t.context_start_seq`,
    beforeSeq: Prisma.sql`coalesce((SELECT min(w.seq) FROM ${windowEntries}), t.last_seq + 1)`,
    excludeSeqs: Prisma.sql`(SELECT coalesce(array_agg(p.seq), '{}'::int[]) FROM context_entries p WHERE p.thread_id = t.id AND p.pinned)`,
    limit: Prisma.sql`${RECALL_CANDIDATES}::int`,
  });
  return Prisma.sql`CASE WHEN coalesce((t.settings->>'recallTokens')::int, ${defaultTokens}::int) > 0 THEN (
      SELECT coalesce(json_agg(json_build_object('seq', m.seq, 'role', m.role, 'content', left(m.content, ${RECALL_CANDIDATE_MAX_CHARS}::int),
          'createdAt', m.created_at, 'score', r.score) ORDER BY r.score DESC, r.seq DESC), '[]'::json)
      FROM (${ranked}) r JOIN messages m ON m.thread_id = t.id AND m.seq = r.seq
    ) END`;
}

/** A message recall may show (alias `m`): complete, not superseded, not forgotten. */
const READABLE = Prisma.sql`m.status = 'complete' AND NOT m.superseded AND m.deleted_at IS NULL`;

/**
 * Whether thread `t` recalls across its owner's chats: its recall slot (its setting, else `defaultTokens`) above 0 and
 * its recall scope (its setting, else `defaultScope`) `user`.
 */
function recallsAcrossChatsSql(defaultTokens: number, defaultScope: 'thread' | 'user'): Prisma.Sql {
  return Prisma.sql`coalesce((t.settings->>'recallTokens')::int, ${defaultTokens}::int) > 0
      AND coalesce(t.settings->>'recallScope', ${defaultScope}::text) = 'user'`;
}

/**
 * Cross-thread recall of thread `t` (a subquery of the context read): the best matches of its newest user entry in
 * the owner's other threads (elsewhereRankedSql), when the thread's recall slot is above 0 and its recall scope
 * (its setting, else `defaultScope`) is `user`.
 */
function recallElsewhereSql(defaultTokens: number, defaultScope: 'thread' | 'user', queryText?: string): Prisma.Sql {
  const windowEntries = Prisma.sql`context_entries w WHERE w.thread_id = t.id AND NOT w.pinned AND w.seq >= t.context_start_seq`;
  const query =
    queryText !== undefined
      ? Prisma.sql`${queryText}::text`
      : Prisma.sql`coalesce((SELECT w.content FROM ${windowEntries} AND w.role = 'user' ORDER BY w.seq DESC LIMIT 1), '')`;
  const ranked = elsewhereRankedSql({
    threadId: Prisma.sql`t.id`,
    query,
    limit: Prisma.sql`${RECALL_ELSEWHERE_CANDIDATES}::int`,
    maxChats: ELSEWHERE_RECALL_CHATS,
  });
  return Prisma.sql`CASE WHEN ${recallsAcrossChatsSql(defaultTokens, defaultScope)} THEN (
      SELECT coalesce(json_agg(json_build_object('seq', r.seq, 'role', r.role, 'content', left(r.content, ${RECALL_CANDIDATE_MAX_CHARS}::int),
          'createdAt', r.created_at, 'score', r.score, 'threadId', r.thread_id, 'title', r.title) ORDER BY r.score DESC), '[]'::json)
      FROM (${ranked}) r
    ) END`;
}

/**
 * The recall notes of thread `t` under its current summary revision (ContextPackManifest.recallNote), the first per
 * served message: `served_seq`, `note`. A subquery of the context read.
 */
const HELD_NOTES = Prisma.sql`(
    SELECT DISTINCT ON ((c.recall_note->>'servedSeq')::int) (c.recall_note->>'servedSeq')::int AS served_seq, c.recall_note AS note
    FROM model_calls c
    WHERE c.thread_id = t.id AND c.recall_note IS NOT NULL AND c.error IS NULL AND coalesce(c.summary_revision, 0) = t.summary_revision
    ORDER BY (c.recall_note->>'servedSeq')::int, c.created_at
  )`;

/**
 * Sticky recall of thread `t` (a subquery of the context read): the recall notes of its chat calls under the current
 * summary revision (ContextPackManifest.recallNote; the first per served message), each with its recalled messages as
 * they read now: a message forgotten since, or superseded, is left out; another chat's only while it is still the
 * owner's and the thread's recall scope (its setting, else `defaultScope`) is `user`.
 */
function heldRecallSql(defaultScope: 'thread' | 'user'): Prisma.Sql {
  const fields = Prisma.sql`'seq', m.seq, 'role', m.role, 'content', left(m.content, ${RECALL_CANDIDATE_MAX_CHARS}::int), 'createdAt', m.created_at`;
  return Prisma.sql`(
    SELECT coalesce(json_agg(json_build_object('servedSeq', n.served_seq, 'own', (
        SELECT coalesce(json_agg(json_build_object(${fields}) ORDER BY m.seq), '[]'::json) FROM messages m
        WHERE m.thread_id = t.id AND m.seq IN (SELECT jsonb_array_elements_text(n.note->'seqs')::int) AND ${READABLE}
      ), 'elsewhere', (
        SELECT coalesce(json_agg(json_build_object(${fields}, 'threadId', o.id, 'title', o.title) ORDER BY m.created_at), '[]'::json)
        FROM jsonb_to_recordset(n.note->'elsewhere') AS e("threadId" uuid, seq int)
        JOIN threads o ON o.id = e."threadId" AND o.owner_id = t.owner_id
        JOIN messages m ON m.thread_id = o.id AND m.seq = e.seq AND ${READABLE}
        WHERE coalesce(t.settings->>'recallScope', ${defaultScope}::text) = 'user'
      )) ORDER BY n.served_seq), '[]'::json)
    FROM ${HELD_NOTES} n
  )`;
}

/** The fingerprints of thread `t`'s newest recorded chat prompt (an index scan backwards on thread and time). */
const LAST_PROMPT = Prisma.sql`(
  SELECT json_build_object('tools', c.tools_fingerprint, 'messages', c.prompt_fingerprints) FROM model_calls c
  WHERE c.thread_id = t.id AND c.purpose = 'chat' AND c.tools_fingerprint IS NOT NULL
  ORDER BY c.created_at DESC LIMIT 1
)`;

/** Tokens of the recall notes of thread `t` under its current summary revision (the fold trigger counts them). */
const HELD_RECALL_TOKENS = Prisma.sql`(SELECT coalesce(sum(coalesce((n.note->>'tokens')::int, 0)), 0)::int FROM ${HELD_NOTES} n)`;

interface HeldRecallJson {
  servedSeq: number;
  own: RecalledJson[];
  elsewhere: RecalledJson[];
}

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
 * The owner's saved memories of thread `t` that fit `capTokens`, newest first (the rule of savedMemoriesInContext:
 * the newest while their running total fits). A subquery of the context read of a model call.
 */
function savedMemoriesSql(capTokens: number): Prisma.Sql {
  return Prisma.sql`(SELECT coalesce(json_agg(json_build_object('id', s.id, 'text', s.text, 'tokens', s.tokens, 'createdAt', s.created_at)
        ORDER BY s.created_at DESC, s.id DESC), '[]'::json)
      FROM (SELECT m.*, sum(m.tokens) OVER (ORDER BY m.created_at DESC, m.id DESC) AS running
        FROM saved_memories m WHERE m.user_id = t.owner_id AND m.status = 'active' AND ${capTokens}::int > 0) s
      WHERE s.running <= ${capTokens}::int)`;
}

interface SavedMemoryJson {
  id: string;
  text: string;
  tokens: number;
  createdAt: string;
}

/** The context read's row: the thread's columns, its entries, the auto-recall candidates and the saved memories. */
export type ThreadContextRow = ThreadRow & {
  entries: EntryJson[];
  recalled: RecalledJson[] | null;
  recalled_elsewhere?: RecalledJson[] | null;
  saved_memories?: SavedMemoryJson[] | null;
  held_recall?: HeldRecallJson[] | null;
  last_prompt?: { tools: number; messages: number[] } | null;
  held_recall_tokens?: number | null;
};

/** What a context read reads besides the thread and its entries (see threadContextSelect). */
export interface ThreadContextSelectOptions {
  threadId: string;
  /** The deployment's default recall slot; undefined: no recall (nor the newest prompt's fingerprints). */
  recallTokens?: number;
  /** The cap of the owner's saved memories read; undefined: none read. */
  savedMemoryTokens?: number;
  /** The deployment's default recall scope (default `thread`). */
  recallScope?: 'thread' | 'user';
  /** RECALL_STICKY: the held recall notes' tokens come with every read (default off: neither they nor their messages). */
  recallSticky?: boolean;
  /** With recallSticky: the held notes' messages come too (default: when recallTokens is set). */
  heldNotes?: boolean;
  /** With recallTokens: the other chats' matches are read too (default); false when they were read ahead (readRecallElsewhere). */
  elsewhere?: boolean;
}

/** The thread's context entries from its context start on, pinned and in the window, in seq order. */
const ENTRIES = Prisma.sql`(SELECT coalesce(json_agg(json_build_object('seq', e.seq, 'role', e.role, 'content', e.content, 'tokens', e.tokens,
          'toolCalls', e.tool_calls, 'toolCallId', e.tool_call_id, 'pinned', e.pinned, 'encoding', e.encoding) ORDER BY e.seq), '[]'::json)
        FROM context_entries e
        -- Folded entries are deleted by the fold's commit, so every unpinned entry left is in the window: including
        -- one unpinned after the summary passed it, which stays there until the next fold takes it.
        WHERE e.thread_id = t.id AND e.seq >= t.context_start_seq
      )`;

/**
 * The parts of the context read of thread `t`, by the column of ThreadContextRow each one fills, in the order they are
 * selected: a subquery each, or NULL when `options` leave it out.
 */
export function threadContextParts(options: ThreadContextSelectOptions): Record<string, Prisma.Sql> {
  const { recallTokens, savedMemoryTokens, recallScope = 'thread', recallSticky = false } = options;
  const recall = recallTokens !== undefined;
  const heldNotes = options.heldNotes ?? recall;
  return {
    recalled: recall ? recallSql(recallTokens) : Prisma.sql`NULL::json`,
    recalled_elsewhere:
      recall && options.elsewhere !== false ? recallElsewhereSql(recallTokens, recallScope) : Prisma.sql`NULL::json`,
    saved_memories: savedMemoryTokens !== undefined ? savedMemoriesSql(savedMemoryTokens) : Prisma.sql`NULL::json`,
    held_recall: recallSticky && heldNotes ? heldRecallSql(recallScope) : Prisma.sql`NULL::json`,
    held_recall_tokens: recallSticky ? HELD_RECALL_TOKENS : Prisma.sql`NULL::int`,
    // The newest chat prompt's fingerprints come with the turn's reads (those with recall): see ThreadContext.lastPrompt.
    last_prompt: recall ? LAST_PROMPT : Prisma.sql`NULL::json`,
    entries: ENTRIES,
  };
}

/**
 * The context read as a SELECT of one row (none when the thread is gone), for loadThreadContext and for statements
 * that end with it (completeTurn): the thread's columns and its parts (threadContextParts).
 */
export function threadContextSelect(options: ThreadContextSelectOptions): Prisma.Sql {
  const parts = Object.entries(threadContextParts(options)).map(
    ([column, sql]) => Prisma.sql`${sql} AS ${Prisma.raw(column)}`,
  );
  return Prisma.sql`
    SELECT ${THREAD_COLUMNS}, ${Prisma.join(parts, ',\n      ')}
    FROM threads t WHERE t.id = ${options.threadId}::uuid`;
}

/** The ThreadContext of a context read's row. */
export function threadContextFromRow(row: ThreadContextRow): ThreadContext {
  const {
    entries,
    recalled,
    recalled_elsewhere: elsewhere,
    saved_memories: saved,
    held_recall: held,
    held_recall_tokens: heldTokens,
    last_prompt: lastPrompt,
    ...threadRow
  } = row;
  const all = entries.map(toEntryFromJson);
  const savedMemories: SavedMemoryItem[] | null = saved
    ? saved.map((json) => ({ id: json.id, text: json.text, tokens: json.tokens, createdAt: new Date(json.createdAt) }))
    : null;
  return {
    thread: toThread(threadRow),
    window: all.filter((entry) => !entry.pinned),
    pinned: all.filter((entry) => entry.pinned),
    ...(recalled ? { recalled: recalled.map(toRecalled) } : {}),
    ...(elsewhere ? { recalledElsewhere: elsewhere.map(toRecalled) } : {}),
    ...(savedMemories ? { savedMemories } : {}),
    ...(heldTokens ? { heldRecallTokens: heldTokens } : {}),
    ...(lastPrompt ? { lastPrompt } : {}),
    ...(held && held.length > 0
      ? {
          heldRecall: held.map((note) => ({
            servedSeq: note.servedSeq,
            recalled: [...note.own, ...note.elsewhere].map(toRecalled),
          })),
        }
      : {}),
  };
}

/**
 * The thread and its context (pinned entries and the window) in one statement, so one
 * consistent snapshot: a fold committing meanwhile is seen whole or not at all. Its cost does not depend on the
 * transcript's length, only on the window's; with `recall`, the auto-recall candidates come in the same statement
 * (an index search: no extra round trip on the turn's path), and so do the owner's saved memories within
 * `userMemoryTokens`. `recallTokens` is the deployment's default slot. With `promptParts` (and no `recall`), what a
 * chat prompt shows besides the recall slot comes too (saved memories, held recall notes), without the search.
 */
export async function loadThreadContext(
  db: Database,
  threadId: string,
  options: {
    recall?: boolean;
    promptParts?: boolean;
    recallTokens?: number;
    userMemoryTokens?: number;
    recallScope?: 'thread' | 'user';
    recallSticky?: boolean;
    /** With recall: false leaves the other chats' matches out (they were read ahead: readRecallElsewhere). */
    elsewhere?: boolean;
  } = {},
): Promise<ThreadContext | null> {
  const promptParts = options.recall === true || options.promptParts === true;
  const savedMemoryTokens = promptParts ? options.userMemoryTokens : undefined;
  // Prepared: with auto-recall, this is the search's long ranking statement (see prepared-statement.ts).
  const rows = await db.sql.rows<ThreadContextRow>(
    prepared(
      'thread_context',
      threadContextSelect({
        threadId,
        recallTokens: options.recall ? (options.recallTokens ?? 1) : undefined,
        savedMemoryTokens,
        recallScope: options.recallScope,
        recallSticky: options.recallSticky,
        heldNotes: promptParts,
        ...(options.elsewhere === false ? { elsewhere: false } : {}),
      }),
    ),
  );
  return rows[0] ? threadContextFromRow(rows[0]) : null;
}

/**
 * Cross-thread recall read on its own (ThreadContext.recalledElsewhere, or null where the context read would have
 * none: recall off or scope `thread` for this thread, or the thread not `ownerId`'s): the other chats' best matches of
 * `query`, which is what the context read's own subquery finds once `query` is the newest user entry of the window.
 * The turn path starts it when the message is accepted, beside the accept, so the other chats' ranking (the
 * longest part of a context read across a user's chats) overlaps the accept and the turn's start instead of
 * following them (see createRecallPrefetch).
 */
export async function readRecallElsewhere(
  db: Database,
  input: {
    threadId: string;
    ownerId: string | null;
    query: string;
    recallTokens: number;
    recallScope: 'thread' | 'user';
  },
): Promise<RecalledMessage[] | null> {
  const rows = await db.sql.rows<{ recalled_elsewhere: RecalledJson[] | null }>(
    prepared(
      'recall_elsewhere',
      Prisma.sql`
    SELECT ${recallElsewhereSql(input.recallTokens, input.recallScope, input.query)} AS recalled_elsewhere
    FROM threads t WHERE t.id = ${input.threadId}::uuid AND (${input.ownerId}::text IS NULL OR t.owner_id = ${input.ownerId}::text)`,
    ),
  );
  const found = rows[0]?.recalled_elsewhere;
  return found ? found.map(toRecalled) : null;
}

/**
 * Of `recalled` (readRecallElsewhere's result for thread `threadId`, read some time ago), those that the context read
 * could still find now: the message still readable (complete, not superseded, not forgotten, nor its original), its
 * chat still the owner's, and the thread still recalling across chats. A few index lookups: how a read ahead that
 * waited is brought up to date without ranking again (recall-prefetch.ts).
 */
export async function recheckRecallElsewhere(
  db: Database,
  input: { threadId: string; recalled: RecalledMessage[]; recallTokens: number; recallScope: 'thread' | 'user' },
): Promise<RecalledMessage[] | null> {
  const wanted = input.recalled.flatMap((message, index) =>
    message.thread ? [{ i: index, threadId: message.thread.id, seq: message.seq }] : [],
  );
  const rows = await db.sql.rows<{ recalling: boolean; kept: number[] | null }>(Prisma.sql`
    SELECT ${recallsAcrossChatsSql(input.recallTokens, input.recallScope)} AS recalling,
      (SELECT json_agg(e.i) FROM jsonb_to_recordset(${JSON.stringify(wanted)}::jsonb) AS e(i int, "threadId" uuid, seq int)
        JOIN threads o ON o.id = e."threadId" AND o.owner_id = t.owner_id
        JOIN messages m ON m.thread_id = o.id AND m.seq = e.seq
        WHERE ${READABLE}
          AND NOT EXISTS (SELECT 1 FROM messages g WHERE g.id = m.origin_message_id AND g.deleted_at IS NOT NULL)) AS kept
    FROM threads t WHERE t.id = ${input.threadId}::uuid`);
  const row = rows[0];
  if (!row?.recalling) return null;
  const kept = new Set(row.kept ?? []);
  return input.recalled.filter((_, index) => kept.has(index));
}
