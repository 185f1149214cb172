import { randomUUID } from 'node:crypto';
import type { ToolRunStore } from '../core/ports';
import { AsyncRunCapReached } from '../core/tools/async-run-cap';
import type { ToolServices } from '../core/tools/types';
import { createSearchRepository } from './search-repository';
import { TERMINAL_RUN_STATUSES } from '../core/tools/types';
import type { Prisma } from './generated/client';
import { toMessage, toToolRun, toTurn } from './mappers';
import type { Database } from './prisma-client';
import { nextSeq } from './turn-repository';

const TERMINAL = [...TERMINAL_RUN_STATUSES];

type Tx = Prisma.TransactionClient;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** reportRun inside its transaction: the run's report appended to the transcript and the context, and a follow-up turn queued (or joined). */
async function reportRunInTransaction(
  tx: Tx,
  input: Parameters<ToolRunStore['reportRun']>[0],
): ReturnType<ToolRunStore['reportRun']> {
  const { runId, transcriptText, transcriptTokens, note, encoding, basedOn } = input;
  // The thread row first, then the run's (as a forget does): the report and a forget never deadlock, and a
  // forget that committed first has already replaced what this report would write.
  const owner = await tx.toolRun.findUnique({ where: { id: runId }, select: { threadId: true } });
  if (!owner) return { reported: false as const };
  await tx.$executeRaw`SELECT 1 FROM threads WHERE id = ${owner.threadId}::uuid FOR UPDATE`;
  if (!TERMINAL.includes(basedOn.status)) return { reported: false as const };
  // Only the outcome the text was written from: a forget may have replaced it since it was read.
  const marked = await tx.toolRun.updateMany({
    where: { id: runId, reportedAt: null, status: basedOn.status, error: basedOn.error },
    data: { reportedAt: new Date() },
  });
  if (marked.count === 0) return { reported: false as const };
  const run = await tx.toolRun.findUniqueOrThrow({ where: { id: runId } });
  const threadId = run.threadId;
  // Takes the thread row lock: reports and turn appends of one thread are serialized from here on.
  const seq = await nextSeq(tx, threadId);
  const existing = await tx.message.findFirst({ where: { toolRunId: runId, role: 'system' } });
  const data = {
    seq,
    content: transcriptText,
    status: 'complete',
    tokens: transcriptTokens,
    encoding,
    completedAt: new Date(),
  };
  const message = existing
    ? await tx.message.update({ where: { id: existing.id }, data })
    : await tx.message.create({ data: { ...data, threadId, role: 'system', toolRunId: runId } });
  await tx.contextEntry.create({
    data: {
      threadId,
      seq,
      messageId: message.id,
      role: 'system',
      content: note.content,
      tokens: note.tokens,
      encoding,
    },
  });
  // Results landing together share one follow-up: join a follow-up that has not started yet.
  const queued = await tx.turn.findFirst({
    where: { threadId, kind: 'follow-up', status: 'queued' },
    orderBy: { acceptSeq: 'asc' },
  });
  const followUp = queued ?? (await tx.turn.create({ data: { threadId, kind: 'follow-up' } }));
  await tx.toolRun.update({ where: { id: runId }, data: { followUpTurnId: followUp.id } });
  return {
    reported: true as const,
    message: toMessage(message),
    followUp: toTurn(followUp),
    followUpCreated: !queued,
  };
}

// eslint-disable-next-line max-lines-per-function -- a factory of small methods, one per ToolRunStore operation
export function createToolRunRepository(db: Database): ToolRunStore {
  return {
    async createRun({ threadId, messageId, toolCallId, name, args, startedAtSeq, caps }) {
      const id = randomUUID();
      return db.$transaction(async (tx) => {
        if (caps) {
          // Count and insert under one lock on the owner: concurrent turns of one user (several threads, several
          // processes) take turns here, so they cannot all see room and all insert.
          await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`async-runs:${caps.ownerId}`}::text, 0))`;
          const rows = await tx.$queryRaw<{ thread: number; user: number }[]>`
            SELECT count(*) FILTER (WHERE r.thread_id = ${threadId}::uuid)::int AS thread, count(*)::int AS "user"
            FROM tool_runs r JOIN threads t ON t.id = r.thread_id
            WHERE t.owner_id = ${caps.ownerId}::text AND r.status IN ('queued', 'running')`;
          const active = rows[0] ?? { thread: 0, user: 0 };
          if (active.thread >= caps.perThread) throw new AsyncRunCapReached('thread');
          if (active.user >= caps.perUser) throw new AsyncRunCapReached('user');
        }
        const run = await tx.toolRun.create({
          data: { id, threadId, messageId, toolCallId, name, args: args as Prisma.InputJsonValue, startedAtSeq },
        });
        // No seq yet: it gets the thread's next seq when the result lands, so the note sits where it arrived.
        const message = await tx.message.create({
          // Not tied to the turn (it outlives it): it is found by its run id.
          data: {
            threadId,
            role: 'system',
            content: `${name} (run ${id}) is queued…`,
            status: 'streaming',
            toolRunId: id,
          },
        });
        return { run: toToolRun(run), message: toMessage(message) };
      });
    },

    async findRun(runId, ownerId) {
      // A handle that is not a uuid names no run (and must not reach Postgres as a malformed uuid).
      if (!UUID.test(runId)) return null;
      const row = await db.toolRun.findFirst({
        where: { id: runId, ...(ownerId !== null ? { thread: { ownerId } } : {}) },
      });
      return row ? toToolRun(row) : null;
    },

    async startRun(runId) {
      const started = await db.toolRun.updateMany({
        where: { id: runId, status: { in: ['queued', 'running'] } },
        data: { status: 'running', attempts: { increment: 1 }, progress: 0, progressNote: null },
      });
      if (started.count === 0) return null;
      await db.toolRun.updateMany({ where: { id: runId, startedAt: null }, data: { startedAt: new Date() } });
      const row = await db.toolRun.findUnique({ where: { id: runId } });
      return row ? toToolRun(row) : null;
    },

    async saveProgress({ runId, progress, note, transcriptText }) {
      await db.toolRun.updateMany({ where: { id: runId, status: 'running' }, data: { progress, progressNote: note } });
      await db.message.updateMany({
        where: { toolRunId: runId, role: 'system', status: 'streaming' },
        data: { content: transcriptText },
      });
      const message = await db.message.findFirst({ where: { toolRunId: runId, role: 'system' } });
      return message ? toMessage(message) : null;
    },

    async isCancelRequested(runId) {
      const row = await db.toolRun.findUnique({ where: { id: runId }, select: { cancelRequested: true } });
      return row?.cancelRequested ?? false;
    },

    async requestCancel(runId) {
      // A run no worker has started yet is cancelled at once; a running one when its worker reads the flag.
      const queued = await db.toolRun.updateMany({
        where: { id: runId, status: 'queued' },
        data: {
          status: 'cancelled',
          cancelRequested: true,
          error: 'The user cancelled the run before it started.',
          finishedAt: new Date(),
        },
      });
      const running = await db.toolRun.updateMany({
        where: { id: runId, status: 'running' },
        data: { cancelRequested: true },
      });
      if (queued.count + running.count === 0) return null;
      const row = await db.toolRun.findUnique({ where: { id: runId } });
      return row ? toToolRun(row) : null;
    },

    async finishRun({ runId, status, result, resultTokens, condensed, error }) {
      const finished = await db.toolRun.updateMany({
        where: { id: runId, status: { notIn: TERMINAL } },
        data: {
          status,
          result,
          resultTokens,
          condensed,
          error,
          finishedAt: new Date(),
          ...(status === 'succeeded' ? { progress: 1 } : {}),
        },
      });
      if (finished.count === 0) return null;
      const row = await db.toolRun.findUnique({ where: { id: runId } });
      return row ? toToolRun(row) : null;
    },

    reportRun(input) {
      return db.$transaction((tx) => reportRunInTransaction(tx, input));
    },

    async activeRunCounts({ threadId, ownerId }) {
      const rows = await db.$queryRaw<{ thread: number; user: number }[]>`
        SELECT count(*) FILTER (WHERE r.thread_id = ${threadId}::uuid)::int AS thread, count(*)::int AS "user"
        FROM tool_runs r JOIN threads t ON t.id = r.thread_id
        WHERE t.owner_id = ${ownerId}::text AND r.status IN ('queued', 'running')`;
      return rows[0] ?? { thread: 0, user: 0 };
    },

    async followUpDepth(turnId) {
      const rows = await db.$queryRaw<{ depth: number }[]>`
        WITH this AS (SELECT thread_id, accept_seq FROM turns WHERE id = ${turnId}::uuid),
        anchor AS (
          SELECT max(t.accept_seq) AS at FROM turns t, this
          WHERE t.thread_id = this.thread_id AND t.kind <> 'follow-up' AND t.accept_seq <= this.accept_seq
        )
        -- DISTINCT: an interrupted turn and its re-run hold one place (one accept_seq) in the queue.
        SELECT count(DISTINCT t.accept_seq)::int AS depth FROM turns t, this, anchor
        WHERE t.thread_id = this.thread_id AND t.kind = 'follow-up'
          AND t.accept_seq > coalesce(anchor.at, 0) AND t.accept_seq <= this.accept_seq`;
      return rows[0]?.depth ?? 0;
    },

    async followUpNoteSeqs(turnId) {
      const runs = await db.toolRun.findMany({ where: { followUpTurnId: turnId }, select: { id: true } });
      if (runs.length === 0) return [];
      const notes = await db.message.findMany({
        where: { toolRunId: { in: runs.map((run) => run.id) }, role: 'system', seq: { not: null } },
        select: { seq: true },
        orderBy: { seq: 'asc' },
      });
      return notes.flatMap((note) => (note.seq === null ? [] : [note.seq]));
    },

    async markSubmitted({ runId, taskId, timeoutMs }) {
      const updated = await db.$executeRaw`
        UPDATE tool_runs SET task_id = ${taskId}, deadline_at = now() + ${timeoutMs} * interval '1 millisecond', polled_at = now()
        WHERE id = ${runId}::uuid AND task_id IS NULL`;
      return updated > 0;
    },

    async markHanded(runId) {
      await db.toolRun.updateMany({ where: { id: runId, handedAt: null }, data: { handedAt: new Date() } });
    },

    async claimPoll({ runId, minIntervalMs }) {
      const rows = await db.$queryRaw<{ overdue: boolean }[]>`
        UPDATE tool_runs SET polled_at = now()
        WHERE id = ${runId}::uuid AND status = 'running' AND task_id IS NOT NULL
          AND (polled_at IS NULL OR polled_at <= now() - ${minIntervalMs} * interval '1 millisecond')
        RETURNING (deadline_at IS NOT NULL AND deadline_at < now()) AS overdue`;
      return rows[0] ? { claimed: true, overdue: rows[0].overdue } : { claimed: false, overdue: false };
    },

    async markRemoteCancelled(runId) {
      await db.toolRun.updateMany({
        where: { id: runId, remoteCancelledAt: null },
        data: { remoteCancelledAt: new Date() },
      });
    },

    async runsNeedingWork({ limit, olderThanMs, stalePollMs = 30_000 }) {
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT id FROM tool_runs
        WHERE (status = 'queued' AND created_at < now() - ${olderThanMs} * interval '1 millisecond')
           OR (reported_at IS NULL AND status IN ('succeeded', 'failed', 'timed_out', 'cancelled') AND finished_at < now() - ${olderThanMs} * interval '1 millisecond')
           OR (status = 'running' AND task_id IS NOT NULL AND polled_at < now() - ${stalePollMs} * interval '1 millisecond')
           OR (status = 'cancelled' AND task_id IS NOT NULL AND remote_cancelled_at IS NULL AND finished_at < now() - ${olderThanMs} * interval '1 millisecond'
               AND finished_at > now() - interval '1 day')
        ORDER BY created_at LIMIT ${limit}`;
      return rows.map((row) => row.id);
    },
  };
}

/** What tools may read: stored results behind a handle, and the thread's transcript. */
export function createToolServices(db: Database): ToolServices {
  return {
    search: createSearchRepository(db),
    async readStoredResult({ threadId, handle }) {
      if (!UUID.test(handle)) return null;
      // In a fork, a copied text names the original's handle: the fork's own copy of the run or message answers it.
      const run = await db.toolRun.findFirst({ where: { threadId, OR: [{ id: handle }, { originRunId: handle }] } });
      if (run) return { name: run.name, text: run.result ?? run.error ?? `(run ${run.status}; no result yet)` };
      const message = await db.message.findFirst({
        where: { threadId, role: 'tool', OR: [{ id: handle }, { originMessageId: handle }] },
      });
      if (message) return { name: `tool call ${message.toolCallId ?? ''}`.trim(), text: message.content };
      return null;
    },
    async listTranscript({ threadId, afterSeq, limit }) {
      const rows = await db.message.findMany({
        where: { threadId, seq: { gt: afterSeq } },
        orderBy: { seq: 'asc' },
        take: limit,
      });
      return rows.map(toMessage);
    },
  };
}
