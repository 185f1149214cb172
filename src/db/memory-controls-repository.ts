import { AppError } from '../core/errors/app-error';
import { storableJson } from './storable-values';
import type { ExportReader, MemoryControlsStore } from '../core/ports';
import type { Database } from './prisma-client';
import { Prisma, type Thread as ThreadRow } from './generated/client';
import { toMessage, toRevisionRecord, toThread, toTurn } from './mappers';
import { supersedeAnswersAfter } from './supersede-answers';

type Tx = Prisma.TransactionClient;

/** What a fresh context remembers so it can be undone until the next message. */
interface ContextResetUndo {
  contextStartSeq: number;
  coveredThroughSeq: number;
  summaryRevision: number;
  summaryEncoding: string | null;
  /** The thread's last seq at the reset: any later message makes the reset final. */
  lastSeq: number;
}

function undoOf(value: unknown): ContextResetUndo | null {
  if (!value || typeof value !== 'object') return null;
  const undo = value as Partial<ContextResetUndo>;
  return typeof undo.contextStartSeq === 'number' && typeof undo.lastSeq === 'number'
    ? (undo as ContextResetUndo)
    : null;
}

/** Locks the thread row for the transaction: memory writes and folds' commits on a thread are serialized. */
/** What a run cancelled by a forget reports instead of its result (no word of what it read). */
export const RUN_DISCARDED_BY_FORGET =
  'Messages were deleted from this conversation while this run was under way, so its result was ' +
  'discarded (it may have read them). Run it again if it is still needed.';

/** What a forgotten run's error says instead of its own words (which may quote the forgotten messages). */
export const RUN_ERROR_FORGOTTEN = 'The details of this error were deleted with the messages of the conversation.';

/**
 * A forget cancels every run of the thread that has not reported yet: those may have read the transcript before the
 * forget. A queued run never starts, a running one is stopped by its worker (which polls the cancel flag) and its
 * outcome is refused (the run is already terminal), a finished one loses its result: each reports only that it was
 * cancelled. Runs and reports lock the thread row before the run row (reportRun does too), so they never deadlock.
 */
async function discardUnreportedRuns(tx: Tx, threadId: string, now: Date): Promise<void> {
  await tx.toolRun.updateMany({
    where: { threadId, reportedAt: null },
    data: {
      status: 'cancelled',
      cancelRequested: true,
      result: null,
      resultTokens: null,
      condensed: null,
      error: RUN_DISCARDED_BY_FORGET,
    },
  });
  await tx.toolRun.updateMany({ where: { threadId, reportedAt: null, finishedAt: null }, data: { finishedAt: now } });
}

async function lockThread(tx: Tx, threadId: string): Promise<ThreadRow> {
  await tx.$executeRaw`SELECT 1 FROM threads WHERE id = ${threadId}::uuid FOR UPDATE`;
  const row = await tx.thread.findUnique({ where: { id: threadId } });
  if (!row) throw new AppError('NOT_FOUND', 'No such thread.');
  return row;
}

async function pinnedTokensIn(tx: Tx | Database, threadId: string, contextStartSeq: number): Promise<number> {
  const sum = await tx.contextEntry.aggregate({
    where: { threadId, pinned: true, seq: { gte: contextStartSeq } },
    _sum: { tokens: true },
  });
  return sum._sum.tokens ?? 0;
}

const bumpVersion = { version: { increment: 1 } } as const;

async function messagesByIds(tx: Tx | Database, ids: string[]) {
  const rows = await tx.message.findMany({ where: { id: { in: ids } }, orderBy: { seq: 'asc' } });
  return rows.map(toMessage);
}

/** pin inside its transaction: refused (pinned false) when the pins would pass maxPinnedTokens; a folded message's entry is recreated. */
async function pinInTransaction(
  tx: Tx,
  input: Parameters<MemoryControlsStore['pin']>[0],
): ReturnType<MemoryControlsStore['pin']> {
  const { threadId, seqs, maxPinnedTokens } = input;
  const thread = await lockThread(tx, threadId);
  const messages = await tx.message.findMany({
    where: { threadId, seq: { in: seqs }, deletedAt: null, superseded: false },
  });
  const entries = new Map(
    (await tx.contextEntry.findMany({ where: { threadId, seq: { in: seqs } } })).map((entry) => [entry.seq, entry]),
  );
  const pinnedTokens = await pinnedTokensIn(tx, threadId, thread.contextStartSeq);
  let addedTokens = 0;
  for (const message of messages) {
    const entry = entries.get(message.seq ?? -1);
    if (!entry?.pinned) addedTokens += entry ? entry.tokens : message.tokens;
  }
  if (pinnedTokens + addedTokens > maxPinnedTokens) return { pinned: false as const, pinnedTokens, addedTokens };
  for (const message of messages) {
    if (message.seq === null) continue;
    const entry = entries.get(message.seq);
    if (entry) {
      if (!entry.pinned)
        await tx.contextEntry.update({
          where: { threadId_seq: { threadId, seq: message.seq } },
          data: { pinned: true },
        });
      continue;
    }
    // A fold already took it: the model sees it again verbatim, from the transcript.
    await tx.contextEntry.create({
      data: {
        threadId,
        seq: message.seq,
        messageId: message.id,
        role: message.role,
        content: message.content,
        tokens: message.tokens,
        encoding: message.encoding ?? 'o200k_base',
        pinned: true,
        ...(message.toolCalls ? { toolCalls: message.toolCalls as Prisma.InputJsonValue } : {}),
        ...(message.toolCallId ? { toolCallId: message.toolCallId } : {}),
      },
    });
  }
  const ids = messages.map((message) => message.id);
  await tx.message.updateMany({ where: { id: { in: ids } }, data: { pinned: true } });
  await tx.thread.update({ where: { id: threadId }, data: bumpVersion });
  return {
    pinned: true as const,
    messages: await messagesByIds(tx, ids),
    pinnedTokens: pinnedTokens + addedTokens,
  };
}

/** forget inside its transaction: the messages' text, entries, runs' results, saved memories, manifests' tool results and the summaries holding them. */
async function forgetInTransaction(
  tx: Tx,
  input: Parameters<MemoryControlsStore['forget']>[0],
): ReturnType<MemoryControlsStore['forget']> {
  const { threadId, messageIds } = input;
  const thread = await lockThread(tx, threadId);
  const rows = await tx.message.findMany({ where: { threadId, id: { in: messageIds }, deletedAt: null } });
  const ids = rows.map((row) => row.id);
  const seqs = rows.flatMap((row) => (row.seq === null ? [] : [row.seq]));
  const now = new Date();
  // An automatic title is made of the first exchange's words: forgetting one of its messages takes the title
  // back to the default (a user's own title stays). Read before the messages lose their text.
  if (seqs.length > 0)
    await tx.$executeRaw`
      UPDATE threads t SET title = DEFAULT, title_source = 'default', updated_at = now()
      WHERE t.id = ${threadId}::uuid AND t.title_source = 'auto'
        AND (SELECT min(seq) FROM unnest(${seqs}::int[]) seq) <= coalesce((
          SELECT min(a.seq) FROM messages a
          WHERE a.thread_id = t.id AND a.role = 'assistant' AND a.seq > (
            SELECT min(u.seq) FROM messages u
            WHERE u.thread_id = t.id AND u.role = 'user' AND u.seq IS NOT NULL AND u.deleted_at IS NULL)
        ), 2147483647)`;
  await tx.message.updateMany({
    where: { id: { in: ids } },
    data: { content: '', toolCalls: Prisma.DbNull, deletedAt: now, pinned: false },
  });
  await tx.contextEntry.deleteMany({ where: { threadId, seq: { in: seqs } } });
  const toolRunIds = rows.flatMap((row) => (row.toolRunId ? [row.toolRunId] : []));
  const forgottenRuns = { threadId, OR: [{ messageId: { in: ids } }, { id: { in: toolRunIds } }] };
  await tx.toolRun.updateMany({
    where: forgottenRuns,
    data: { result: null, condensed: null, args: {}, progressNote: null },
  });
  // An error may quote what the run was asked (or read): it goes too, leaving that the run failed.
  await tx.toolRun.updateMany({
    where: { ...forgottenRuns, error: { not: null } },
    data: { error: RUN_ERROR_FORGOTTEN },
  });
  await discardUnreportedRuns(tx, threadId, now);
  // The saved memories a forgotten message asked for go with it (issue 27).
  if (ids.length > 0) await tx.$executeRaw`DELETE FROM saved_memories WHERE source_message_id = ANY(${ids}::uuid[])`;
  // The condensed tool results kept with model call manifests: their text goes too (the seq stays, marked forgotten).
  if (seqs.length > 0) {
    await tx.$executeRaw`
      UPDATE model_calls SET tool_results = (
        SELECT jsonb_agg(CASE WHEN (result->>'seq')::int = ANY(${seqs}::int[])
          THEN (result - 'content') || '{"forgotten": true}'::jsonb ELSE result END ORDER BY ordinality)
        FROM jsonb_array_elements(tool_results) WITH ORDINALITY AS results(result, ordinality))
      WHERE thread_id = ${threadId}::uuid AND tool_results IS NOT NULL AND jsonb_array_length(tool_results) > 0
        AND EXISTS (SELECT 1 FROM jsonb_array_elements(tool_results) result WHERE (result->>'seq')::int = ANY(${seqs}::int[]))`;
  }
  // Summaries are progressive: a revision may hold every message from its lineage's context start on.
  const redacted =
    seqs.length === 0
      ? { count: 0 }
      : await tx.summaryRevision.updateMany({
          where: {
            threadId,
            redactedAt: null,
            OR: seqs.map((seq) => ({ contextStartSeq: { lte: seq }, throughSeq: { gte: seq } })),
          },
          data: { text: '', segmentEnds: [], redactedAt: now },
        });
  const covered =
    thread.summaryRevision > 0 &&
    seqs.some((seq) => seq >= thread.contextStartSeq && seq <= thread.summaryCoveredThroughSeq);
  const updated = await tx.thread.update({
    where: { id: threadId },
    data: { ...(covered ? { summaryText: '', summarySegmentEnds: [], summaryTokens: 0 } : {}), ...bumpVersion },
  });
  return { messages: await messagesByIds(tx, ids), thread: toThread(updated), redactedRevisions: redacted.count };
}

// eslint-disable-next-line max-lines-per-function -- a factory of small methods, one per MemoryControlsStore operation
export function createMemoryControlsRepository(db: Database): MemoryControlsStore & ExportReader {
  return {
    async listMessagesBySeq({ threadId, fromSeq, throughSeq }) {
      const rows = await db.message.findMany({
        where: { threadId, seq: { gte: fromSeq, lte: throughSeq } },
        orderBy: { seq: 'asc' },
      });
      return rows.map(toMessage);
    },

    async findMessagesBySeq(threadId, seqs) {
      const rows = await db.message.findMany({ where: { threadId, seq: { in: seqs } }, orderBy: { seq: 'asc' } });
      return rows.map(toMessage);
    },

    async listAnswers(threadId, userMessageId) {
      const turns = await db.turn.findMany({ where: { threadId, userMessageId }, select: { id: true } });
      const rows = await db.message.findMany({
        where: { threadId, turnId: { in: turns.map((turn) => turn.id) }, role: { not: 'user' } },
        orderBy: { seq: 'asc' },
      });
      return rows.map(toMessage);
    },

    async pinnedTokens(threadId) {
      const thread = await db.thread.findUnique({ where: { id: threadId }, select: { contextStartSeq: true } });
      return thread ? pinnedTokensIn(db, threadId, thread.contextStartSeq) : 0;
    },

    pin(input) {
      return db.$transaction((tx) => pinInTransaction(tx, input));
    },

    async unpin({ threadId, seqs }) {
      return db.$transaction(async (tx) => {
        const thread = await lockThread(tx, threadId);
        const rows = await tx.message.findMany({
          where: { threadId, seq: { in: seqs }, pinned: true },
          select: { id: true },
        });
        const ids = rows.map((row) => row.id);
        await tx.contextEntry.updateMany({ where: { threadId, seq: { in: seqs } }, data: { pinned: false } });
        await tx.message.updateMany({ where: { id: { in: ids } }, data: { pinned: false } });
        await tx.thread.update({ where: { id: threadId }, data: bumpVersion });
        return {
          messages: await messagesByIds(tx, ids),
          pinnedTokens: await pinnedTokensIn(tx, threadId, thread.contextStartSeq),
        };
      });
    },

    async updateSettings({ threadId, settings, memoryMode }) {
      const row = await db.thread.update({
        where: { id: threadId },
        data: { settings: storableJson(settings) as Prisma.InputJsonValue, memoryMode, ...bumpVersion },
      });
      return toThread(row);
    },

    async resetContext(threadId) {
      return db.$transaction(async (tx) => {
        const thread = await lockThread(tx, threadId);
        const pending = undoOf(thread.contextResetUndo);
        // Nothing was said since the last fresh context: a second one changes nothing (and keeps the first's undo).
        if (pending && pending.lastSeq === thread.lastSeq) return toThread(thread);
        const undo: ContextResetUndo = {
          contextStartSeq: thread.contextStartSeq,
          coveredThroughSeq: thread.summaryCoveredThroughSeq,
          summaryRevision: thread.summaryRevision,
          summaryEncoding: thread.summaryEncoding,
          lastSeq: thread.lastSeq,
        };
        // The summary closes (its revision stays in the history); coverage through lastSeq keeps it from reading as
        // withdrawn, and the next fold starts at the new context start.
        const row = await tx.thread.update({
          where: { id: threadId },
          data: {
            contextStartSeq: thread.lastSeq + 1,
            summaryText: '',
            summarySegmentEnds: [],
            summaryTokens: 0,
            summaryCoveredThroughSeq: thread.lastSeq,
            contextResetUndo: undo as unknown as Prisma.InputJsonValue,
            ...bumpVersion,
          },
        });
        return toThread(row);
      });
    },

    async undoContextReset(threadId) {
      return db.$transaction(async (tx) => {
        const thread = await lockThread(tx, threadId);
        const undo = undoOf(thread.contextResetUndo);
        if (!undo || undo.lastSeq !== thread.lastSeq || undo.summaryRevision !== thread.summaryRevision) return null;
        const revision =
          undo.summaryRevision > 0
            ? await tx.summaryRevision.findUnique({
                where: { threadId_revision: { threadId, revision: undo.summaryRevision } },
              })
            : null;
        // A revision redacted meanwhile (a forget) comes back withdrawn, to be rebuilt.
        const usable = revision && revision.redactedAt === null ? revision : null;
        const row = await tx.thread.update({
          where: { id: threadId },
          data: {
            contextStartSeq: undo.contextStartSeq,
            summaryCoveredThroughSeq: undo.coveredThroughSeq,
            summaryText: usable?.text ?? '',
            summarySegmentEnds: usable?.segmentEnds ?? [],
            summaryTokens: usable?.tokens ?? 0,
            summaryEncoding: undo.summaryEncoding,
            contextResetUndo: Prisma.DbNull,
            ...bumpVersion,
          },
        });
        return toThread(row);
      });
    },

    forget(input) {
      return db.$transaction((tx) => forgetInTransaction(tx, input));
    },

    async queueRegenerate({ threadId, userMessageId }) {
      return db.$transaction(async (tx) => {
        await lockThread(tx, threadId);
        const active = await tx.turn.count({ where: { threadId, status: { in: ['queued', 'running'] } } });
        if (active > 0)
          throw new AppError('BUSY', 'An answer is still being written; wait for it (or stop it), then regenerate.');
        const user = await tx.message.findFirst({
          where: { id: userMessageId, threadId, role: 'user', deletedAt: null },
        });
        if (!user || user.seq === null) throw new AppError('NOT_FOUND', 'No such message to answer again.');
        const later = await tx.message.count({
          where: { threadId, role: 'user', seq: { gt: user.seq }, deletedAt: null },
        });
        if (later > 0) throw new AppError('CONFLICT', 'Only the answer to the last message can be regenerated.');
        const ids = await supersedeAnswersAfter(tx, threadId, user.seq);
        const turn = await tx.turn.create({ data: { threadId, kind: 'regenerate', userMessageId } });
        await tx.thread.update({ where: { id: threadId }, data: bumpVersion });
        return { turn: toTurn(turn), superseded: await messagesByIds(tx, ids) };
      });
    },

    async lastUserMessage(threadId) {
      const row = await db.message.findFirst({
        where: { threadId, role: 'user', seq: { not: null }, deletedAt: null },
        orderBy: { seq: 'desc' },
      });
      return row ? toMessage(row) : null;
    },

    async threadsAwaitingRebuild(limit) {
      const rows = await db.$queryRaw<{ id: string; version: number }[]>`
        SELECT id, version FROM threads
        WHERE summary_revision > 0 AND summary_text = '' AND summary_covered_through_seq >= context_start_seq
        LIMIT ${limit}`;
      return rows.map((row) => ({ threadId: row.id, version: row.version }));
    },

    async messagesAfter({ threadId, afterSeq, limit }) {
      const rows = await db.message.findMany({
        where: { threadId, seq: { gt: afterSeq } },
        orderBy: { seq: 'asc' },
        take: limit,
      });
      return rows.map(toMessage);
    },

    async revisionsAfter({ threadId, afterRevision, limit }) {
      const rows = await db.summaryRevision.findMany({
        where: { threadId, revision: { gt: afterRevision } },
        orderBy: { revision: 'asc' },
        take: limit,
      });
      return rows.map(toRevisionRecord);
    },
  };
}
