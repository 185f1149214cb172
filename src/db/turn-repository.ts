import { createHash, randomUUID } from 'node:crypto';
import { AppError } from '../core/errors/app-error';
import type { ChatCallRecord, NextTurn, TurnStore } from '../core/ports';
import type { Database } from './prisma-client';
import { isUniqueViolation } from './prisma-client';
import {
  loadThreadContext,
  readRecallElsewhere,
  recheckRecallElsewhere,
  threadContextFromRow,
  threadContextSelect,
  type ThreadContextRow,
} from './load-thread-context';
import { prepared } from './prepared-statement';
import { createRecallPrefetch } from './recall-prefetch';
import { acceptUserMessageSql, toAcceptedMessage, type AcceptedJson } from './accept-user-message';
import { UUID } from './keyset-cursor';
import { createRememberedKeys } from './remembered-keys';
import { toMessage, toTurn } from './mappers';
import { callUser } from './model-call-repository';
import {
  ASYNC_COMMIT,
  MESSAGE_COLUMNS,
  TURN_COLUMNS,
  jsonParameter,
  messageFromJson,
  qualified,
  turnFromJson,
} from './sql-columns';
import { Prisma, type Message as MessageRow, type Turn as TurnRow } from './generated/client';

type Tx = Prisma.TransactionClient;

/** The runner's step as the turn functions return it (chat_lease_next_turn). */
interface NextTurnJson {
  lease: boolean;
  started?: { turn: Record<string, unknown>; userMessage: Record<string, unknown> | null } | null;
}

/** Hands out the thread's next seq; the row lock it takes serializes appends per thread. */
export async function nextSeq(tx: Tx, threadId: string): Promise<number> {
  const row = await tx.thread.update({
    where: { id: threadId },
    data: { lastSeq: { increment: 1 }, lastActivityAt: new Date() },
    select: { lastSeq: true },
  });
  return row.lastSeq;
}

/** System-prefix hashes remembered as stored (see `knownPrefixes`). */
const KNOWN_PREFIXES_MAX = 64;

/**
 * The turn's hot path in raw SQL on the driver's pool (`db.sql`): each port call is one statement (one round trip,
 * one commit). The accept (with the thread's ownership), a retry's queueing, the runner's step (the lease with the
 * turn's start, or the lease's release when nothing is queued), the turn's end with the next step, and the lease's
 * release after a failure are PL/pgSQL functions (migrations turn_path_functions, release_lease_function,
 * turn_cycle_functions): the accept and the queueing lock the thread row, then count, so the queue bound holds under
 * concurrent sends. A turn is six statements: accept, step, context read, streaming placeholder, answer, end; where
 * recall reaches across the user's chats, a seventh reads the other chats beside the accept (recall-prefetch.ts).
 * Prisma's interactive transactions cost several round trips and ~1.7 ms each here.
 *
 * Durability: a commit that waits for the WAL flush costs 1-3 ms here, so a turn waits for it only where a user
 * would notice a loss: the accepted user message, the finished answer and the turn's end. The lease, the turn's
 * start and the streaming placeholder commit without waiting (ASYNC_COMMIT); a Postgres crash can only lose
 * the latest of them, which leaves the turn queued or interrupted: states the runner and the sweeper recover from.
 * `recallTokens` is RECALL_TOKENS: whether the context reads of model calls also find auto-recall candidates;
 * `userMemoryTokens` (USER_MEMORY_TOKENS) bounds the owner's saved memories those reads bring.
 * The turn's start also finalizes a fresh context and supersedes regenerated answers (chat_start_next_turn).
 */
// eslint-disable-next-line max-lines-per-function -- a factory of small methods, one per TurnStore operation (the long ones are top-level functions)
export function createTurnRepository(
  db: Database,
  options: {
    recallTokens?: number;
    userMemoryTokens?: number;
    recallScope?: 'thread' | 'user';
    recallSticky?: boolean;
  } = {},
): TurnStore {
  const recallTokens = options.recallTokens ?? 1;
  const userMemoryTokens = options.userMemoryTokens;
  const recallScope = options.recallScope ?? 'thread';
  const recallSticky = options.recallSticky ?? false;
  // Prefix hashes this process has stored: their text is not sent again (the insert would do nothing). One per
  // configured system prompt in practice; bounded all the same.
  const knownPrefixes = createRememberedKeys(KNOWN_PREFIXES_MAX);
  // Cross-thread recall read beside the accept (recall-prefetch.ts), where the deployment recalls across chats.
  const readAhead = recallScope === 'user' && recallTokens > 0 ? createRecallPrefetch() : null;
  const systemPrefixOf = (call: ChatCallRecord) => {
    const { text, tokens } = call.manifest.systemPrefix;
    const hash = createHash('sha256').update(text).digest('hex');
    return { hash, text: knownPrefixes.has(hash) ? null : text, tokens };
  };
  // A resend finds its message's turn, or the turn that runs it again after a crash (the one that will answer it).
  const findByClientMessageId = async (threadId: string, ownerId: string | null, clientMessageId: string) => {
    const rows = await db.sql.rows<MessageRow & { turnRow: Record<string, unknown> | null }>(Prisma.sql`
      SELECT ${qualified(MESSAGE_COLUMNS, 'm')},
        (SELECT row_to_json(x) FROM (
          SELECT ${TURN_COLUMNS} FROM turns WHERE id = m.turn_id OR resumed_from_turn_id = m.turn_id
          ORDER BY resumed_from_turn_id IS NULL LIMIT 1) x) AS "turnRow"
      FROM messages m JOIN threads t ON t.id = m.thread_id AND (${ownerId}::text IS NULL OR t.owner_id = ${ownerId}::text)
      WHERE m.thread_id = ${threadId}::uuid AND m.client_message_id = ${clientMessageId}`);
    const row = rows[0];
    if (!row?.turnId || !row.turnRow) return null;
    const { turnRow, ...message } = row;
    return { message: toMessage(message), turn: toTurn(turnFromJson(turnRow)), duplicate: true };
  };

  /** The store's NextTurn of a step's JSON; a started turn's first context (with auto-recall) is read after it. */
  const nextTurnOf = async (next: NextTurnJson | undefined, threadId: string): Promise<NextTurn> => {
    if (!next?.lease) return { outcome: 'leased-elsewhere' };
    if (!next.started) return { outcome: 'idle' };
    const turn = toTurn(turnFromJson(next.started.turn));
    const userMessage = next.started.userMessage ? toMessage(messageFromJson(next.started.userMessage)) : null;
    // The lease is ours: no other turn changes the window until we release it (a fold may commit meanwhile,
    // which the one-statement read sees whole or not at all).
    const ahead = userMessage ? readAhead?.take(threadId, userMessage.id) : undefined;
    const [read, taken] = await Promise.all([
      loadThreadContext(db, threadId, {
        recall: true,
        recallTokens,
        recallScope,
        recallSticky,
        ...(userMemoryTokens !== undefined ? { userMemoryTokens } : {}),
        ...(ahead ? { elsewhere: false } : {}),
      }),
      ahead,
    ]);
    // The thread was deleted under the started turn: nothing to answer.
    if (!read) return { outcome: 'idle' };
    let context = read;
    if (ahead && userMessage) {
      const elsewhere = { threadId, recallTokens, recallScope };
      const found = !taken
        ? // Not usable (recall-prefetch.ts): the other chats are read now, as the context read would have.
          await readRecallElsewhere(db, { ...elsewhere, ownerId: null, query: userMessage.content })
        : taken.recalled && !taken.fresh
          ? await recheckRecallElsewhere(db, { ...elsewhere, recalled: taken.recalled })
          : taken.recalled;
      if (found) context = { ...read, recalledElsewhere: found };
    }
    return { outcome: 'started', turn, userMessage, context };
  };

  return {
    async acceptUserMessage({ threadId, ownerId, content, tokens, encoding, clientMessageId, maxQueued }) {
      // A malformed id is simply not found (the cast would fail the statement).
      if (!UUID.test(threadId)) throw new AppError('NOT_FOUND', 'No such thread.');
      if (clientMessageId) {
        const seen = await findByClientMessageId(threadId, ownerId, clientMessageId);
        if (seen) return seen;
      }
      const messageId = randomUUID();
      const turnId = randomUUID();
      const settle = readAhead?.start(threadId, () =>
        readRecallElsewhere(db, { threadId, ownerId, query: content, recallTokens, recallScope }),
      );
      try {
        const [result] = await db.sql.rows<{ accepted: AcceptedJson }>(
          acceptUserMessageSql({
            threadId,
            ownerId,
            messageId,
            turnId,
            content,
            tokens,
            encoding,
            clientMessageId,
            maxQueued,
          }),
        );
        const accepted = result?.accepted;
        settle?.(accepted?.message ? { messageId, activeBefore: accepted.queued ?? 0 } : null);
        if (!accepted || accepted.missing) throw new AppError('NOT_FOUND', 'No such thread.');
        if (!accepted.message || !accepted.turnCreatedAt) {
          throw new AppError(
            'BUSY',
            `This thread already has ${(accepted?.queued ?? 1) - 1} message(s) waiting; try again when the current answer is done.`,
          );
        }
        return toAcceptedMessage(
          { message: accepted.message, turnCreatedAt: accepted.turnCreatedAt },
          { threadId, messageId, turnId },
        );
      } catch (error) {
        settle?.(null);
        if (clientMessageId && isUniqueViolation(error)) {
          const raced = await findByClientMessageId(threadId, ownerId, clientMessageId);
          if (raced) return raced;
        }
        throw error;
      }
    },

    async queueTurn({ threadId, kind, userMessageId, maxQueued }) {
      const [result] = await db.sql.rows<{
        queued: { active: number; same: boolean; turn: Record<string, unknown> | null };
      }>(Prisma.sql`
        SELECT chat_queue_turn(${threadId}::uuid, ${randomUUID()}::uuid, ${kind}::text, ${userMessageId}::uuid, ${maxQueued}::int) AS queued`);
      const queued = result?.queued;
      if (queued?.turn) return toTurn(turnFromJson(queued.turn));
      if (queued?.same) throw new AppError('CONFLICT', 'This message is already being answered again.');
      throw new AppError(
        'BUSY',
        `This thread already has ${(queued?.active ?? 1) - 1} message(s) waiting; try again when the current answer is done.`,
      );
    },

    async findTurn(turnId) {
      const rows = await db.sql.rows<TurnRow>(Prisma.sql`SELECT ${TURN_COLUMNS} FROM turns WHERE id = ${turnId}::uuid`);
      return rows[0] ? toTurn(rows[0]) : null;
    },

    async acquireLease({ threadId, owner, ttlMs }) {
      const taken = await db.sql.run(Prisma.sql`
        UPDATE threads SET lease_owner = ${owner}, lease_expires_at = now() + ${ttlMs} * interval '1 millisecond'
        FROM ${ASYNC_COMMIT}
        WHERE id = ${threadId}::uuid AND (lease_owner IS NULL OR lease_owner = ${owner} OR lease_expires_at < now())`);
      return taken === 1;
    },

    async releaseLease({ threadId, owner }) {
      const [row] = await db.sql.rows<{ queued: boolean }>(
        Prisma.sql`SELECT chat_release_lease(${threadId}::uuid, ${owner}::text) AS queued`,
      );
      return row?.queued === true;
    },

    async nextTurn({ threadId, owner, ttlMs }) {
      const [row] = await db.sql.rows<{ next: NextTurnJson }>(
        Prisma.sql`SELECT chat_next_turn(${threadId}::uuid, ${owner}::text, ${ttlMs}::int) AS next`,
      );
      return nextTurnOf(row?.next, threadId);
    },

    loadContext: (threadId, read) =>
      loadThreadContext(db, threadId, {
        ...read,
        recallTokens,
        recallScope,
        recallSticky,
        ...(userMemoryTokens !== undefined ? { userMemoryTokens } : {}),
      }),

    async saveTokenCounts({ threadId, encoding, entries, summaryTokens }) {
      // The thread row first, then its entries: the order of every other writer (memory-controls-repository's lockThread,
      // folds, appends), so a recount after an encoding change cannot deadlock with a forget or a pin.
      await db.$transaction([
        summaryTokens !== null
          ? db.thread.updateMany({ where: { id: threadId }, data: { summaryTokens, summaryEncoding: encoding } })
          : db.$executeRaw`SELECT 1 FROM threads WHERE id = ${threadId}::uuid FOR UPDATE`,
        ...entries.map((entry) =>
          db.contextEntry.updateMany({ where: { threadId, seq: entry.seq }, data: { tokens: entry.tokens, encoding } }),
        ),
      ]);
    },

    async appendTurnMessage({ threadId, turnId, role, content, status, toolCalls, toolCallId, toolRunId }) {
      // The thread row update hands out the seq and serializes appends per thread.
      const rows = await db.sql.rows<MessageRow>(Prisma.sql`
        WITH bumped AS (
          UPDATE threads SET last_seq = last_seq + 1, last_activity_at = now(), updated_at = now()
          FROM ${ASYNC_COMMIT} WHERE id = ${threadId}::uuid RETURNING last_seq
        )
        INSERT INTO messages (id, thread_id, seq, role, content, status, turn_id, tool_calls, tool_call_id, tool_run_id)
        SELECT ${randomUUID()}::uuid, ${threadId}::uuid, last_seq, ${role}::text, ${content}::text, ${status}::text, ${turnId}::uuid,
          ${jsonParameter(toolCalls)}::jsonb, ${toolCallId ?? null}::text, ${toolRunId ?? null}::uuid
        FROM bumped
        RETURNING ${MESSAGE_COLUMNS}`);
      if (!rows[0]) throw new AppError('NOT_FOUND', 'No such thread.');
      return toMessage(rows[0]);
    },

    async saveStreamingText(messageId, content) {
      await db.sql.run(
        Prisma.sql`UPDATE messages SET content = ${content}, updated_at = now() WHERE id = ${messageId}::uuid AND status = 'streaming'`,
      );
    },

    async finishMessage({ messageId, content, status, error, toolCalls, tokens, encoding, entry, call }) {
      const prefix = call ? systemPrefixOf(call) : null;
      // The message's final state, its context entry and the model call that produced it: one statement.
      const rows = await db.sql.rows<MessageRow>(Prisma.sql`
        WITH finished AS (
          UPDATE messages SET content = ${content}::text, status = ${status}::text, tokens = ${tokens}::int, encoding = ${encoding}::text,
            completed_at = now(), updated_at = now(),
            error = coalesce(${jsonParameter(error)}::jsonb, error), tool_calls = coalesce(${jsonParameter(toolCalls)}::jsonb, tool_calls)
          WHERE id = ${messageId}::uuid
          RETURNING ${MESSAGE_COLUMNS}
        ), entry AS (
          INSERT INTO context_entries (thread_id, seq, message_id, role, content, tokens, encoding, tool_calls, tool_call_id)
          SELECT "threadId", seq, id, ${entry?.role ?? null}::text, ${entry?.content ?? null}::text, ${entry?.tokens ?? null}::int,
            ${encoding}::text, ${jsonParameter(entry?.toolCalls)}::jsonb, ${entry?.toolCallId ?? null}::text
          FROM finished WHERE ${entry !== undefined}::boolean AND seq IS NOT NULL
        ), prefix AS (
          INSERT INTO system_prefixes (hash, text, tokens)
          SELECT ${prefix?.hash ?? null}::text, ${prefix?.text ?? null}::text, ${prefix?.tokens ?? null}::int
          WHERE ${prefix?.text !== undefined && prefix?.text !== null}::boolean
          ON CONFLICT (hash) DO NOTHING
        ), call AS (
          ${call ? insertCall(call, prefix?.hash ?? null) : Prisma.sql`SELECT 1`}
        )
        SELECT * FROM finished`);
      if (!rows[0]) throw new AppError('NOT_FOUND', 'No such message.');
      if (prefix) knownPrefixes.add(prefix.hash);
      return toMessage(rows[0]);
    },

    async finishTurn({ turnId, status, error }) {
      const rows = await db.sql.rows<TurnRow>(Prisma.sql`
        UPDATE turns SET status = ${status}::text, finished_at = now(), error = coalesce(${jsonParameter(error)}::jsonb, error)
        WHERE id = ${turnId}::uuid RETURNING ${TURN_COLUMNS}`);
      if (!rows[0]) throw new AppError('NOT_FOUND', 'No such turn.');
      return toTurn(rows[0]);
    },

    async completeTurn({ turnId, threadId, owner, ttlMs, startNext = true }) {
      // The context read uses the statement's snapshot: it sees the answer's commit (an earlier statement), not what
      // the function changes (the turn, the next turn's start). LEFT JOIN: the step's result comes back even when the
      // thread is gone.
      const [row] = await db.sql.rows<
        Partial<ThreadContextRow> & { done: { turn: Record<string, unknown>; next: NextTurnJson } | null }
      >(
        prepared(
          'complete_turn',
          Prisma.sql`
        SELECT chat_complete_turn(${turnId}::uuid, ${threadId}::uuid, ${owner}::text, ${ttlMs}::int, ${startNext}::boolean) AS done, ctx.*
        FROM (SELECT 1) one LEFT JOIN (${threadContextSelect({ threadId, recallScope, recallSticky })}) ctx ON true`,
        ),
      );
      if (!row?.done) throw new AppError('NOT_FOUND', 'No such turn.');
      const { done, ...context } = row;
      return {
        turn: toTurn(turnFromJson(done.turn)),
        context: context.id ? threadContextFromRow(context as ThreadContextRow) : null,
        next: await nextTurnOf(done.next, threadId),
      };
    },

    async hasQueuedTurns(threadId) {
      const rows = await db.sql.rows<{ queued: boolean }>(Prisma.sql`
        SELECT EXISTS (SELECT 1 FROM turns WHERE thread_id = ${threadId}::uuid AND status = 'queued') AS queued`);
      return rows[0]?.queued === true;
    },

    async hasRunningTurn(threadId, turnId) {
      const running = await db.turn.count({
        where: { threadId, status: 'running', ...(turnId !== undefined ? { id: turnId } : {}) },
      });
      return running > 0;
    },

    async threadsWithStrandedTurns(limit) {
      const rows = await db.sql.rows<{ id: string }>(Prisma.sql`
        SELECT DISTINCT t.id FROM threads t JOIN turns q ON q.thread_id = t.id
        WHERE q.status IN ('queued', 'running') AND (t.lease_owner IS NULL OR t.lease_expires_at < now())
        LIMIT ${limit}`);
      return rows.map((row) => row.id);
    },

    async recoverInterruptedTurns({ threadId, resume, error }) {
      // One function under the thread's row lock (migration turn_resume): a runner taking the lease meanwhile either
      // committed first (nothing changes here) or waits for the recovery and starts the re-run.
      const [row] = await db.sql.rows<{ recovered: { resumed: string[]; failed: string[] } }>(Prisma.sql`
        SELECT chat_recover_interrupted_turns(${threadId}::uuid, ${resume}::boolean, ${JSON.stringify(error)}::jsonb) AS recovered`);
      return { resumed: row?.recovered.resumed ?? [], failed: row?.recovered.failed ?? [] };
    },
  };
}

/** The INSERT of a chat call record with its manifest, for a CTE of finishMessage (its message id from `finished`). */
function insertCall(call: ChatCallRecord, prefixHash: string | null): Prisma.Sql {
  const { manifest } = call;
  return Prisma.sql`
    INSERT INTO model_calls (id, thread_id, user_id, message_id, purpose, model, estimated_prompt_tokens, reported_prompt_tokens,
      reported_completion_tokens, latency_ms, summary_revision, window_from_seq, window_through_seq, pinned_seqs, recalled_seqs, omitted,
      overflow_retry, error, system_prefix_hash, window_seqs, tool_results, token_parts, saved_memory_ids, recalled_elsewhere, reported_cached_tokens, reported_cache_write_tokens, prompt_divergence, recall_note,
      prompt_fingerprints, tools_fingerprint)
    SELECT gen_random_uuid(), ${call.threadId}::uuid, ${callUser(call)}, finished.id, ${call.purpose}, ${call.model},
      ${call.estimatedPromptTokens}::int, ${call.reportedPromptTokens}::int, ${call.reportedCompletionTokens}::int,
      ${call.latencyMs}::int, ${call.summaryRevision ?? null}::int, ${call.windowFromSeq ?? null}::int,
      ${call.windowThroughSeq ?? null}::int, ${call.pinnedSeqs ?? []}::int[], ${call.recalledSeqs ?? []}::int[], ${call.omitted ?? 0}::int,
      ${call.overflowRetry ?? false}::boolean, ${call.error ?? null}::text, ${prefixHash}::text, ${manifest.windowSeqs}::int[],
      ${JSON.stringify(manifest.toolResults)}::jsonb, ${JSON.stringify(manifest.parts)}::jsonb, ${manifest.savedMemoryIds ?? []}::uuid[],
      ${manifest.recalledElsewhere && manifest.recalledElsewhere.length > 0 ? JSON.stringify(manifest.recalledElsewhere) : null}::jsonb,
      ${call.reportedCachedTokens ?? null}::int, ${call.reportedCacheWriteTokens ?? null}::int, ${call.promptDivergence ? JSON.stringify(call.promptDivergence) : null}::jsonb,
      ${manifest.recallNote ? JSON.stringify(manifest.recallNote) : null}::jsonb,
      ${call.promptFingerprints?.messages ?? []}::int[], ${call.promptFingerprints?.tools ?? null}::int
    FROM finished`;
}
