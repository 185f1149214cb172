import { AsyncRunCapReached } from '../../src/core/tools/async-run-cap';
import type { ToolRun, ToolRunStore } from '../../src/core/ports';
import { TERMINAL_RUN_STATUSES } from '../../src/core/tools/types';
import type { Turn } from '../../src/core/domain/types';
import {
  byId,
  copy,
  newId,
  nextSeq,
  toMessage,
  type MemoryDatabase,
  type MessageRow,
  type ToolRunRow,
} from './memory-database';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const terminal = (status: ToolRun['status']) => TERMINAL_RUN_STATUSES.includes(status);

function toRun(row: ToolRunRow): ToolRun {
  const { followUpTurnId: _turn, polledAt: _polled, ...run } = row;
  return copy(run);
}

/** ToolRunStore in memory (test/contracts/tool-run-store.contract.ts holds it to the Postgres repository's behaviour). */
export function createMemoryToolRunStore(database: MemoryDatabase): ToolRunStore {
  const runOf = (runId: string) => byId(database.toolRuns, runId);
  const noteOf = (runId: string) =>
    database.messages.find((message) => message.toolRunId === runId && message.role === 'system');
  const now = () => new Date();
  return {
    async createRun({ threadId, messageId, toolCallId, name, args, startedAtSeq, caps }) {
      if (!database.threads.has(threadId) || !byId(database.messages, messageId))
        throw new Error('foreign key: no such thread or message');
      if (caps) {
        // Synchronous from the count to the insert: as atomic as the real store's lock.
        const active = database.toolRuns.filter(
          (run) =>
            (run.status === 'queued' || run.status === 'running') &&
            database.threads.get(run.threadId)?.ownerId === caps.ownerId,
        );
        if (active.filter((run) => run.threadId === threadId).length >= caps.perThread)
          throw new AsyncRunCapReached('thread');
        if (active.length >= caps.perUser) throw new AsyncRunCapReached('user');
      }
      const id = newId();
      const created = now();
      const run: ToolRunRow = {
        id,
        threadId,
        messageId,
        toolCallId,
        name,
        args: copy(args),
        status: 'queued',
        progress: 0,
        progressNote: null,
        result: null,
        resultTokens: null,
        condensed: null,
        error: null,
        startedAtSeq,
        cancelRequested: false,
        attempts: 0,
        reportedAt: null,
        createdAt: created,
        startedAt: null,
        finishedAt: null,
        taskId: null,
        deadlineAt: null,
        remoteCancelledAt: null,
        handedAt: null,
        followUpTurnId: null,
        polledAt: null,
      };
      database.toolRuns.push(run);
      // No seq yet: it gets the thread's next seq when the result lands.
      const message: MessageRow = {
        id: newId(),
        threadId,
        seq: null,
        role: 'system',
        content: `${name} (run ${id}) is queued…`,
        toolCalls: null,
        toolCallId: null,
        status: 'streaming',
        error: null,
        tokens: 0,
        clientMessageId: null,
        turnId: null,
        toolRunId: id,
        pinned: false,
        superseded: false,
        deleted: false,
        createdAt: created,
        updatedAt: created,
        completedAt: null,
        encoding: null,
      };
      database.messages.push(message);
      return { run: toRun(run), message: toMessage(message) };
    },

    async findRun(runId, ownerId) {
      if (!UUID.test(runId)) return null;
      const run = runOf(runId);
      if (!run || (ownerId !== null && database.threads.get(run.threadId)?.ownerId !== ownerId)) return null;
      return toRun(run);
    },

    async startRun(runId) {
      const run = runOf(runId);
      if (!run || (run.status !== 'queued' && run.status !== 'running')) return null;
      Object.assign(run, {
        status: 'running',
        attempts: run.attempts + 1,
        progress: 0,
        progressNote: null,
        startedAt: run.startedAt ?? now(),
      });
      return toRun(run);
    },

    async saveProgress({ runId, progress, note, transcriptText }) {
      const run = runOf(runId);
      if (run?.status === 'running') Object.assign(run, { progress, progressNote: note });
      const message = noteOf(runId);
      if (message?.status === 'streaming') message.content = transcriptText;
      return message ? toMessage(message) : null;
    },

    async isCancelRequested(runId) {
      return runOf(runId)?.cancelRequested ?? false;
    },

    async requestCancel(runId) {
      // A run no worker has started yet is cancelled at once; a running one when its worker reads the flag.
      const run = runOf(runId);
      if (!run || (run.status !== 'queued' && run.status !== 'running')) return null;
      if (run.status === 'queued')
        Object.assign(run, {
          status: 'cancelled',
          error: 'The user cancelled the run before it started.',
          finishedAt: now(),
        });
      run.cancelRequested = true;
      return toRun(run);
    },

    async finishRun({ runId, status, result, resultTokens, condensed, error }) {
      const run = runOf(runId);
      if (!run || terminal(run.status)) return null;
      Object.assign(run, {
        status,
        result,
        resultTokens,
        condensed,
        error,
        finishedAt: now(),
        ...(status === 'succeeded' ? { progress: 1 } : {}),
      });
      return toRun(run);
    },

    async reportRun({ runId, transcriptText, transcriptTokens, note, encoding, basedOn }) {
      const run = runOf(runId);
      // Only once, and only the outcome the text was written from (a forget may have replaced it since).
      if (
        !run ||
        !terminal(basedOn.status) ||
        run.reportedAt !== null ||
        run.status !== basedOn.status ||
        run.error !== basedOn.error
      )
        return { reported: false };
      const thread = database.threads.get(run.threadId);
      if (!thread) return { reported: false };
      run.reportedAt = now();
      const seq = nextSeq(thread);
      const fields = {
        seq,
        content: transcriptText,
        status: 'complete' as const,
        tokens: transcriptTokens,
        encoding,
        completedAt: now(),
      };
      let message = noteOf(runId);
      if (message) Object.assign(message, fields);
      else {
        message = {
          ...fields,
          id: newId(),
          threadId: run.threadId,
          role: 'system',
          toolCalls: null,
          toolCallId: null,
          error: null,
          clientMessageId: null,
          turnId: null,
          toolRunId: runId,
          pinned: false,
          superseded: false,
          deleted: false,
          createdAt: now(),
          updatedAt: now(),
        };
        database.messages.push(message);
      }
      database.entries.push({
        threadId: run.threadId,
        seq,
        messageId: message.id,
        role: 'system',
        content: note.content,
        tokens: note.tokens,
        encoding,
        pinned: false,
      });
      // Results landing together share one follow-up: join a follow-up that has not started yet.
      const queued = database.turns.find(
        (turn) => turn.threadId === run.threadId && turn.kind === 'follow-up' && turn.status === 'queued',
      );
      const followUp: Turn = queued ?? {
        id: newId(),
        threadId: run.threadId,
        kind: 'follow-up',
        userMessageId: null,
        status: 'queued',
        error: null,
        createdAt: now(),
        startedAt: null,
        finishedAt: null,
      };
      if (!queued) database.turns.push(followUp);
      run.followUpTurnId = followUp.id;
      return { reported: true, message: toMessage(message), followUp: copy(followUp), followUpCreated: !queued };
    },

    async followUpNoteSeqs(turnId) {
      const runs = new Set(database.toolRuns.filter((run) => run.followUpTurnId === turnId).map((run) => run.id));
      return database.messages
        .filter(
          (message) =>
            message.toolRunId !== null &&
            runs.has(message.toolRunId) &&
            message.role === 'system' &&
            message.seq !== null,
        )
        .map((message) => message.seq as number)
        .sort((a, b) => a - b);
    },

    async activeRunCounts({ threadId, ownerId }) {
      const active = database.toolRuns.filter(
        (run) =>
          (run.status === 'queued' || run.status === 'running') &&
          database.threads.get(run.threadId)?.ownerId === ownerId,
      );
      return { thread: active.filter((run) => run.threadId === threadId).length, user: active.length };
    },

    async followUpDepth(turnId) {
      // Follow-ups since the thread's last turn that answered a user (message, retry, regenerate), this one included.
      const turn = byId(database.turns, turnId);
      if (!turn) return 0;
      // An interrupted turn and its re-run hold one place in the queue: the re-run counts.
      const rerun = new Set(database.resumedFrom.values());
      const upTo = database.turns
        .slice(0, database.turns.indexOf(turn) + 1)
        .filter((other) => other.threadId === turn.threadId && !rerun.has(other.id));
      const anchor = upTo.map((other) => other.kind !== 'follow-up').lastIndexOf(true);
      return upTo.slice(anchor + 1).filter((other) => other.kind === 'follow-up').length;
    },

    async markSubmitted({ runId, taskId, timeoutMs }) {
      const run = runOf(runId);
      if (!run || run.taskId !== null) return false;
      Object.assign(run, { taskId, deadlineAt: new Date(Date.now() + timeoutMs), polledAt: Date.now() });
      return true;
    },

    async markHanded(runId) {
      const run = runOf(runId);
      if (run && run.handedAt === null) run.handedAt = now();
    },

    async claimPoll({ runId, minIntervalMs }) {
      const run = runOf(runId);
      if (
        !run ||
        run.status !== 'running' ||
        run.taskId === null ||
        (run.polledAt !== null && run.polledAt > Date.now() - minIntervalMs)
      )
        return { claimed: false, overdue: false };
      run.polledAt = Date.now();
      return { claimed: true, overdue: run.deadlineAt !== null && run.deadlineAt.getTime() < Date.now() };
    },

    async markRemoteCancelled(runId) {
      const run = runOf(runId);
      if (run && run.remoteCancelledAt === null) run.remoteCancelledAt = now();
    },

    async runsNeedingWork({ limit, olderThanMs, stalePollMs = 30_000 }) {
      const cutoff = Date.now() - olderThanMs;
      const finishedBefore = (run: ToolRunRow) => run.finishedAt !== null && run.finishedAt.getTime() < cutoff;
      return database.toolRuns
        .filter(
          (run) =>
            (run.status === 'queued' && run.createdAt.getTime() < cutoff) ||
            (run.reportedAt === null && terminal(run.status) && finishedBefore(run)) ||
            (run.status === 'running' &&
              run.taskId !== null &&
              run.polledAt !== null &&
              run.polledAt < Date.now() - stalePollMs) ||
            (run.status === 'cancelled' &&
              run.taskId !== null &&
              run.remoteCancelledAt === null &&
              finishedBefore(run) &&
              (run.finishedAt?.getTime() ?? 0) > Date.now() - 86_400_000),
        )
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
        .slice(0, limit)
        .map((run) => run.id);
    },
  };
}
