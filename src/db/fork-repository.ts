import { randomUUID } from 'node:crypto';
import type { ForkStore } from '../core/ports';
import type { Thread as ThreadRow } from './generated/client';
import { Prisma } from './generated/client';
import { AppError } from '../core/errors/app-error';
import { toThread } from './mappers';
import { ownerThreadsLock } from './thread-quota';
import { acceptUserMessageSql, toAcceptedMessage, type AcceptedJson } from './accept-user-message';
import type { Database } from './prisma-client';

/**
 * The fork's window entries: the parent's entries from the fork's context start through the fork point that are
 * pinned or after the chosen summary; where a later fold of the parent already deleted an entry, it is rebuilt from
 * the copied message with its stored count: a tool result or a run's note as it entered a pack (the first chat call
 * that carried it, in the thread where it was first written), else the message itself.
 */
const ENTRIES = Prisma.sql`
  INSERT INTO context_entries (thread_id, seq, message_id, role, content, tool_calls, tool_call_id, tokens, encoding, pinned, created_at)
  SELECT f.id, e.seq, s.new_id, e.role, e.content, e.tool_calls, e.tool_call_id, e.tokens, e.encoding, e.pinned, e.created_at
  FROM fork f
  JOIN context_entries e ON e.thread_id = f.forked_from_thread_id AND e.seq >= f.context_start_seq AND e.seq <= f.forked_from_seq
    AND (e.pinned OR e.seq > f.summary_covered_through_seq)
  JOIN source s ON s.seq = e.seq
  UNION ALL
  SELECT f.id, s.seq, s.new_id, s.role, coalesce(r.content, s.content), s.tool_calls, s.tool_call_id, coalesce(r.tokens, s.tokens),
    coalesce(s.encoding, 'o200k_base'), false, s.completed_at
  FROM fork f
  JOIN source s ON s.seq > f.summary_covered_through_seq AND s.seq >= f.context_start_seq
  LEFT JOIN LATERAL (
    SELECT result->>'content' AS content, (result->>'tokens')::int AS tokens
    FROM model_calls c CROSS JOIN LATERAL jsonb_array_elements(c.tool_results) result
    WHERE s.role IN ('tool', 'system') AND c.purpose = 'chat' AND c.tool_results IS NOT NULL AND c.created_at >= s.created_at
      AND c.thread_id = coalesce((SELECT o.thread_id FROM messages o WHERE o.id = s.origin_message_id), f.forked_from_thread_id)
      AND (result->>'seq')::int = s.seq AND result ? 'content'
    ORDER BY c.created_at LIMIT 1
  ) r ON true
  WHERE s.deleted_at IS NULL AND NOT s.superseded AND (s.content <> '' OR s.tool_calls IS NOT NULL)
    AND (s.status = 'complete' OR (s.status = 'cancelled' AND s.content <> ''))
    AND NOT EXISTS (SELECT 1 FROM context_entries p WHERE p.thread_id = f.forked_from_thread_id AND p.seq = s.seq)`;

/** The fork's copies of the parent's turns that have a copied message, in the parent's order. */
const COPIED_TURNS = Prisma.sql`
  INSERT INTO turns (id, thread_id, kind, user_message_id, status, error, created_at, started_at, finished_at)
  SELECT q.new_id, f.id, q.kind, u.new_id, q.status, q.error, q.created_at, q.started_at, q.finished_at
  FROM turn_map q CROSS JOIN fork f LEFT JOIN source u ON u.id = q.user_message_id
  ORDER BY q.accept_seq -- the copies draw their accept_seq in the parent's order`;

/** The fork's copies of the parent's tool runs reported at or before the fork point. */
const COPIED_RUNS = Prisma.sql`
  INSERT INTO tool_runs (id, thread_id, message_id, tool_call_id, name, args, status, progress, progress_note, result, result_tokens,
    condensed, error, started_at_seq, cancel_requested, attempts, follow_up_turn_id, reported_at, created_at, started_at, finished_at,
    deadline_at, remote_cancelled_at, origin_run_id)
  SELECT r.new_id, f.id, coalesce(a.new_id, r.message_id), r.tool_call_id, r.name, r.args, r.status, r.progress, r.progress_note,
    r.result, r.result_tokens, r.condensed, r.error, r.started_at_seq, r.cancel_requested, r.attempts, q.new_id, r.reported_at,
    r.created_at, r.started_at, r.finished_at, r.deadline_at, r.remote_cancelled_at, coalesce(r.origin_run_id, r.id)
  FROM run_map r CROSS JOIN fork f LEFT JOIN source a ON a.id = r.message_id LEFT JOIN turn_map q ON q.id = r.follow_up_turn_id`;

/** The fork's copies of the parent's messages through the fork point (each naming its original). */
const COPIED_MESSAGES = Prisma.sql`
  -- search_vector and the client view's chain are copied: their triggers skip a row inserted with them.
  INSERT INTO messages (id, thread_id, seq, role, content, tool_calls, tool_call_id, status, error, tokens, encoding, turn_id, tool_run_id,
    pinned, superseded, deleted_at, created_at, updated_at, completed_at, search_vector, origin_message_id,
    client_prefix_hash, client_chain, client_answer_from)
  SELECT s.new_id, f.id, s.seq, s.role, s.content, s.tool_calls, s.tool_call_id, s.status, s.error, s.tokens, s.encoding, q.new_id,
    r.new_id, s.pinned AND s.seq >= f.context_start_seq, s.superseded, s.deleted_at, s.created_at, s.updated_at, s.completed_at,
    s.search_vector, coalesce(s.origin_message_id, s.id), s.client_prefix_hash, s.client_chain, s.client_answer_from
  FROM source s CROSS JOIN fork f LEFT JOIN turn_map q ON q.id = s.turn_id LEFT JOIN run_map r ON r.id = s.tool_run_id`;

/** The fork's copies of the parent's summary revisions up to the one it starts with. */
const COPIED_REVISIONS = Prisma.sql`
  INSERT INTO summary_revisions (id, thread_id, revision, author, author_id, text, segment_ends, tokens, from_seq, through_seq,
    context_start_seq, model, tokens_in, tokens_out, duration_ms, identifiers_kept, identifiers_total, redacted_at, created_at)
  SELECT gen_random_uuid(), f.id, r.revision, r.author, r.author_id, r.text, r.segment_ends, r.tokens, r.from_seq, r.through_seq, r.context_start_seq,
    r.model, r.tokens_in, r.tokens_out, r.duration_ms, r.identifiers_kept, r.identifiers_total, r.redacted_at, r.created_at
  FROM summary_revisions r JOIN fork f ON r.thread_id = f.forked_from_thread_id
  WHERE r.revision <= f.summary_revision AND r.through_seq <= f.forked_from_seq`;

/** The fork's columns as a Thread row. */
const FORK_COLUMNS = Prisma.sql`
  id, owner_id AS "ownerId", title, created_at AS "createdAt", updated_at AS "updatedAt", last_activity_at AS "lastActivityAt",
  last_seq AS "lastSeq", summary_text AS "summaryText", summary_tokens AS "summaryTokens", summary_encoding AS "summaryEncoding",
  summary_covered_through_seq AS "summaryCoveredThroughSeq", summary_revision AS "summaryRevision",
  summary_segment_ends AS "summarySegmentEnds", context_start_seq AS "contextStartSeq", memory_mode AS "memoryMode", settings, version, last_fold_at AS "lastFoldAt",
  last_fold_error AS "lastFoldError", lease_owner AS "leaseOwner", lease_expires_at AS "leaseExpiresAt",
  forked_from_thread_id AS "forkedFromThreadId", forked_from_seq AS "forkedFromSeq"`;

/**
 * The whole fork as one statement: data-modifying CTEs that all read one snapshot of the parent, so a fold, a turn
 * or a forget committing meanwhile is copied whole or not at all. `parent` is empty (and nothing is written) when a
 * queued or running turn of the parent has a message at or before the fork point.
 */
function forkStatement(input: {
  forkId: string;
  parentId: string;
  throughSeq: number;
  title: string;
  maxThreads: number;
}): Prisma.Sql {
  const { forkId, parentId, throughSeq, title, maxThreads } = input;
  return Prisma.sql`
    WITH parent AS (
      SELECT t.* FROM threads t
      WHERE t.id = ${parentId}::uuid AND t.last_seq >= ${throughSeq}::int
        AND (SELECT count(*) FROM threads o WHERE o.owner_id = t.owner_id) < ${maxThreads}::int
        AND NOT EXISTS (
          SELECT 1 FROM turns q JOIN messages m ON m.turn_id = q.id
          WHERE q.thread_id = t.id AND q.status IN ('queued', 'running') AND m.seq <= ${throughSeq}::int)
        AND NOT EXISTS (
          SELECT 1 FROM messages m WHERE m.thread_id = t.id AND m.status IN ('streaming', 'pending') AND m.seq <= ${throughSeq}::int)
    ), start AS (
      -- The context start the parent had at the fork point: its own when not after it; else (a fresh context came
      -- later) the latest start at or before it that a summary revision or the pending undo remembers.
      SELECT CASE WHEN p.context_start_seq <= ${throughSeq}::int THEN p.context_start_seq ELSE greatest(
        coalesce((SELECT max(r.context_start_seq) FROM summary_revisions r WHERE r.thread_id = p.id AND r.context_start_seq <= ${throughSeq}::int), 1),
        coalesce((SELECT u FROM (SELECT (p.context_reset_undo->>'contextStartSeq')::int AS u) x WHERE u <= ${throughSeq}::int), 1)
      ) END AS seq
      FROM parent p
    ), chosen AS (
      SELECT r.* FROM summary_revisions r, parent p, start
      WHERE r.thread_id = p.id AND r.through_seq <= ${throughSeq}::int AND r.redacted_at IS NULL AND r.context_start_seq = start.seq
      ORDER BY r.revision DESC LIMIT 1
    ), fork AS (
      INSERT INTO threads (id, owner_id, title, title_source, last_seq, summary_text, summary_segment_ends, summary_tokens, summary_encoding,
        summary_covered_through_seq, summary_revision, context_start_seq, memory_mode, settings, version, forked_from_thread_id, forked_from_seq)
      SELECT ${forkId}::uuid, p.owner_id, ${title}::text, CASE WHEN p.title_source = 'default' THEN 'default' ELSE 'auto' END, ${throughSeq}::int, coalesce(c.text, ''), coalesce(c.segment_ends, '{}'), coalesce(c.tokens, 0),
        CASE WHEN c.revision IS NOT NULL THEN p.summary_encoding END, coalesce(c.through_seq, start.seq - 1), coalesce(c.revision, 0),
        start.seq, p.memory_mode, p.settings, 0, p.id, ${throughSeq}::int
      FROM parent p CROSS JOIN start LEFT JOIN chosen c ON true
      RETURNING *
    ), source AS MATERIALIZED (
      SELECT m.*, gen_random_uuid() AS new_id FROM messages m
      WHERE m.thread_id = ${parentId}::uuid AND m.seq <= ${throughSeq}::int AND EXISTS (SELECT 1 FROM parent)
    ), turn_map AS MATERIALIZED (
      -- By the parent's id first: an index range of its turns and runs, never a scan of every thread's.
      SELECT q.*, gen_random_uuid() AS new_id FROM turns q
      WHERE q.thread_id = ${parentId}::uuid AND q.id IN (SELECT turn_id FROM source WHERE turn_id IS NOT NULL)
    ), run_map AS MATERIALIZED (
      -- Runs reported at or before the fork point (their note is copied); runs still pending report to the parent only.
      SELECT r.*, gen_random_uuid() AS new_id FROM tool_runs r
      WHERE r.thread_id = ${parentId}::uuid AND r.id IN (SELECT tool_run_id FROM source WHERE tool_run_id IS NOT NULL AND role = 'system')
    ), copied_turns AS (
      ${COPIED_TURNS}
    ), copied_runs AS (
      ${COPIED_RUNS}
    ), copied_messages AS (
      ${COPIED_MESSAGES}
    ), copied_entries AS (
      ${ENTRIES}
    ), copied_revisions AS (
      ${COPIED_REVISIONS}
    )
    SELECT (SELECT count(*)::int FROM threads o WHERE o.owner_id = (SELECT owner_id FROM threads WHERE id = ${parentId}::uuid)) AS owned,
      ${FORK_COLUMNS}
    FROM (SELECT 1) one LEFT JOIN fork ON true`;
}

type ForkWithMessageInput = Parameters<ForkStore['forkWithMessage']>[0];

/**
 * forkWithMessage inside its transaction: a repeated edit (same client message id) finds the first's fork; otherwise
 * the fork (forkStatement, under the owner's thread-creation lock) and the user message accepted on it.
 */
async function forkAndAccept(
  tx: Prisma.TransactionClient,
  input: ForkWithMessageInput,
): ReturnType<ForkStore['forkWithMessage']> {
  const { parentId, ownerId, throughSeq, title, maxThreads, message } = input;
  const { clientMessageId } = message;
  if (clientMessageId) {
    // Two edits with one client id take turns here; the second sees the first's committed fork.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`edit:${parentId}:${clientMessageId}`}::text, 0))`;
    const earlier = await tx.$queryRaw<{ id: string }[]>`
      SELECT t.id FROM threads t JOIN messages m ON m.thread_id = t.id
      WHERE t.forked_from_thread_id = ${parentId}::uuid AND m.client_message_id = ${clientMessageId} LIMIT 1`;
    if (earlier[0]) return { existing: earlier[0].id };
  }
  await tx.$executeRaw(ownerThreadsLock(ownerId));
  const rows = await tx.$queryRaw<(ThreadRow & { owned: number })[]>(
    forkStatement({ forkId: randomUUID(), parentId, throughSeq, title, maxThreads }),
  );
  const row = rows[0];
  if (!row?.id) {
    const owned = row?.owned ?? 0;
    return { refused: owned >= maxThreads ? ('quota' as const) : ('busy' as const), owned };
  }
  const { owned: _owned, ...thread } = row;
  const messageId = randomUUID();
  const turnId = randomUUID();
  const [result] = await tx.$queryRaw<{ accepted: AcceptedJson }[]>(
    acceptUserMessageSql({
      threadId: row.id,
      ownerId,
      messageId,
      turnId,
      content: message.content,
      tokens: message.tokens,
      encoding: message.encoding,
      clientMessageId,
      maxQueued: message.maxQueued,
    }),
  );
  const accepted = result?.accepted;
  // Thrown inside the transaction: the fork is rolled back with it, nothing is left to count against the quota.
  if (!accepted?.message || !accepted.turnCreatedAt)
    throw new AppError('BUSY', 'The edit could not be stored; try again.');
  return {
    thread: toThread(thread),
    accepted: toAcceptedMessage(
      { message: accepted.message, turnCreatedAt: accepted.turnCreatedAt },
      { threadId: row.id, messageId, turnId },
    ),
  };
}

export function createForkRepository(db: Database): ForkStore {
  return {
    async forkThread({ parentId, ownerId, throughSeq, title, maxThreads }) {
      // The owner's thread-creation lock first (as createThread takes it): the statement's snapshot, taken after it,
      // counts every thread created before, so the cap is exact.
      const [, rows] = await db.$transaction([
        db.$executeRaw(ownerThreadsLock(ownerId)),
        db.$queryRaw<(ThreadRow & { owned: number })[]>(
          forkStatement({ forkId: randomUUID(), parentId, throughSeq, title, maxThreads }),
        ),
      ]);
      const row = rows[0];
      if (row?.id) {
        const { owned: _owned, ...thread } = row;
        return { thread: toThread(thread) };
      }
      const owned = row?.owned ?? 0;
      return { refused: owned >= maxThreads ? 'quota' : 'busy', owned };
    },

    forkWithMessage(input) {
      // A fork of a long thread is one heavy statement: room for it, and a connection held for no model call.
      return db.$transaction((tx) => forkAndAccept(tx, input), { maxWait: 10_000, timeout: 60_000 });
    },

    async listForks(threadId) {
      const rows = await db.thread.findMany({
        where: { forkedFromThreadId: threadId },
        select: { id: true, title: true, forkedFromSeq: true, createdAt: true },
        orderBy: [{ forkedFromSeq: 'asc' }, { createdAt: 'asc' }],
      });
      return rows.map((row) => ({
        threadId: row.id,
        title: row.title,
        seq: row.forkedFromSeq ?? 0,
        createdAt: row.createdAt,
      }));
    },

    async findForkByClientMessageId({ parentId, clientMessageId }) {
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT t.id FROM threads t JOIN messages m ON m.thread_id = t.id
        WHERE t.forked_from_thread_id = ${parentId}::uuid AND m.client_message_id = ${clientMessageId} LIMIT 1`;
      return rows[0]?.id ?? null;
    },

    async listCopies({ messageIds, ownerId }) {
      if (messageIds.length === 0) return [];
      // Copies share their original's id as origin_message_id (the original has none): same root, other row.
      const rows = await db.$queryRaw<{ threadId: string; title: string; messageId: string; seq: number }[]>`
        WITH roots AS (SELECT id, coalesce(origin_message_id, id) AS root FROM messages WHERE id = ANY(${messageIds}::uuid[]))
        SELECT DISTINCT ON (m.id) t.id AS "threadId", t.title, m.id AS "messageId", m.seq
        FROM roots r JOIN messages m ON (m.id = r.root OR m.origin_message_id = r.root) AND m.id <> r.id
        JOIN threads t ON t.id = m.thread_id
        WHERE t.owner_id = ${ownerId} AND m.deleted_at IS NULL AND m.seq IS NOT NULL
          AND m.thread_id NOT IN (SELECT thread_id FROM messages WHERE id = ANY(${messageIds}::uuid[]))
        ORDER BY m.id`;
      return rows;
    },
  };
}
