import { AppError } from '../../src/core/errors/app-error';
import type { MemoryControlsStore } from '../../src/core/ports';
import {
  copy,
  toMessage,
  toThread,
  type ContextResetUndo,
  type MemoryDatabase,
  type ThreadRow,
} from './memory-database';
import { supersedeAnswersAfter } from './memory-turn-store';

/** What a run cancelled by a forget reports instead of its result (the repository's RUN_DISCARDED_BY_FORGET). */
const RUN_DISCARDED =
  'Messages were deleted from this conversation while this run was under way, so its result was ' +
  'discarded (it may have read them). Run it again if it is still needed.';
/** What a forgotten run's error says instead (the repository's RUN_ERROR_FORGOTTEN). */
const RUN_ERROR_FORGOTTEN = 'The details of this error were deleted with the messages of the conversation.';

/**
 * MemoryControlsStore in memory (test/contracts/memory-controls-store.contract.ts holds it to the Postgres repository's behaviour):
 * each write bumps the thread's version, like the repository's transaction on the locked thread row.
 */
export function createMemoryMemoryControlsStore(database: MemoryDatabase): MemoryControlsStore {
  const threadRow = (threadId: string): ThreadRow => {
    const thread = database.threads.get(threadId);
    if (!thread) throw new AppError('NOT_FOUND', 'No such thread.');
    return thread;
  };
  const messagesOf = (threadId: string) => database.messages.filter((message) => message.threadId === threadId);
  /**
   * An automatic title is made of the first exchange's words: whether `seqs` (about to be forgotten) reach into it, up
   * to the first answer after the first live user message (any seq when there is no such answer).
   */
  const madeOfForgotten = (threadId: string, seqs: number[]) => {
    const numbered = messagesOf(threadId).filter((message) => message.seq !== null);
    const firstUser = Math.min(
      ...numbered.filter((message) => message.role === 'user' && !message.deleted).map((message) => message.seq ?? 0),
    );
    const firstAnswer = Math.min(
      ...numbered
        .filter((message) => message.role === 'assistant' && (message.seq ?? 0) > firstUser)
        .map((message) => message.seq ?? 0),
    );
    return Math.min(...seqs) <= firstAnswer;
  };
  const bySeq = (a: { seq: number | null }, b: { seq: number | null }) => (a.seq ?? Infinity) - (b.seq ?? Infinity);
  const pinnedTokensOf = (thread: ThreadRow) =>
    database.entries
      .filter((entry) => entry.threadId === thread.id && entry.pinned && entry.seq >= thread.contextStartSeq)
      .reduce((sum, entry) => sum + entry.tokens, 0);
  const byIds = (ids: string[]) =>
    database.messages
      .filter((message) => ids.includes(message.id))
      .sort(bySeq)
      .map(toMessage);

  return {
    async listMessagesBySeq({ threadId, fromSeq, throughSeq }) {
      return messagesOf(threadId)
        .filter((message) => message.seq !== null && message.seq >= fromSeq && message.seq <= throughSeq)
        .sort(bySeq)
        .map(toMessage);
    },
    async findMessagesBySeq(threadId, seqs) {
      return messagesOf(threadId)
        .filter((message) => message.seq !== null && seqs.includes(message.seq))
        .sort(bySeq)
        .map(toMessage);
    },
    async listAnswers(threadId, userMessageId) {
      const turns = new Set(
        database.turns
          .filter((turn) => turn.threadId === threadId && turn.userMessageId === userMessageId)
          .map((turn) => turn.id),
      );
      return messagesOf(threadId)
        .filter((message) => message.turnId !== null && turns.has(message.turnId) && message.role !== 'user')
        .sort(bySeq)
        .map(toMessage);
    },
    async pinnedTokens(threadId) {
      const thread = database.threads.get(threadId);
      return thread ? pinnedTokensOf(thread) : 0;
    },

    async pin({ threadId, seqs, maxPinnedTokens }) {
      const thread = threadRow(threadId);
      const messages = messagesOf(threadId).filter(
        (message) => message.seq !== null && seqs.includes(message.seq) && !message.deleted && !message.superseded,
      );
      const entryOf = (seq: number) =>
        database.entries.find((entry) => entry.threadId === threadId && entry.seq === seq);
      const pinnedTokens = pinnedTokensOf(thread);
      let addedTokens = 0;
      for (const message of messages) {
        const entry = entryOf(message.seq ?? -1);
        if (!entry?.pinned) addedTokens += entry ? entry.tokens : message.tokens;
      }
      if (pinnedTokens + addedTokens > maxPinnedTokens) return { pinned: false, pinnedTokens, addedTokens };
      for (const message of messages) {
        const seq = message.seq as number;
        const entry = entryOf(seq);
        if (entry) entry.pinned = true;
        // A fold already took it: the model sees it again verbatim, from the transcript.
        else {
          database.entries.push({
            threadId,
            seq,
            messageId: message.id,
            role: message.role,
            content: message.content,
            tokens: message.tokens,
            encoding: message.encoding ?? 'o200k_base',
            pinned: true,
            ...(message.toolCalls ? { toolCalls: copy(message.toolCalls) } : {}),
            ...(message.toolCallId ? { toolCallId: message.toolCallId } : {}),
          });
        }
        message.pinned = true;
      }
      thread.version += 1;
      return {
        pinned: true,
        messages: byIds(messages.map((message) => message.id)),
        pinnedTokens: pinnedTokens + addedTokens,
      };
    },

    async unpin({ threadId, seqs }) {
      const thread = threadRow(threadId);
      const messages = messagesOf(threadId).filter(
        (message) => message.seq !== null && seqs.includes(message.seq) && message.pinned,
      );
      for (const entry of database.entries)
        if (entry.threadId === threadId && seqs.includes(entry.seq)) entry.pinned = false;
      for (const message of messages) message.pinned = false;
      thread.version += 1;
      return { messages: byIds(messages.map((message) => message.id)), pinnedTokens: pinnedTokensOf(thread) };
    },

    async updateSettings({ threadId, settings, memoryMode }) {
      const thread = threadRow(threadId);
      Object.assign(thread, {
        settings: copy(settings),
        memoryMode,
        version: thread.version + 1,
        updatedAt: new Date(),
      });
      return toThread(thread);
    },

    async resetContext(threadId) {
      const thread = threadRow(threadId);
      // Nothing was said since the last fresh context: a second one changes nothing (and keeps the first's undo).
      if (thread.contextResetUndo && thread.contextResetUndo.lastSeq === thread.lastSeq) return toThread(thread);
      const undo: ContextResetUndo = {
        contextStartSeq: thread.contextStartSeq,
        coveredThroughSeq: thread.summary?.coveredThroughSeq ?? 0,
        summaryRevision: thread.summary?.revision ?? 0,
        summaryEncoding: thread.summaryEncoding,
        lastSeq: thread.lastSeq,
      };
      // The summary closes (its revision stays in the history); coverage through lastSeq keeps it from reading as withdrawn.
      // (Without a revision the thread shows no summary, as the repository's row mapper does.)
      thread.summary =
        thread.summary && thread.summary.revision > 0
          ? { text: '', tokens: 0, coveredThroughSeq: thread.lastSeq, revision: thread.summary.revision }
          : null;
      Object.assign(thread, {
        contextStartSeq: thread.lastSeq + 1,
        contextResetUndo: undo,
        version: thread.version + 1,
      });
      return toThread(thread);
    },

    async undoContextReset(threadId) {
      const thread = threadRow(threadId);
      const undo = thread.contextResetUndo;
      if (!undo || undo.lastSeq !== thread.lastSeq || undo.summaryRevision !== (thread.summary?.revision ?? 0))
        return null;
      const revision =
        undo.summaryRevision > 0
          ? database.revisions.find((row) => row.threadId === threadId && row.revision === undo.summaryRevision)
          : undefined;
      // A revision redacted meanwhile (a forget) comes back withdrawn, to be rebuilt.
      const usable = revision && !revision.redacted ? revision : null;
      thread.summary =
        undo.summaryRevision > 0
          ? {
              text: usable?.text ?? '',
              tokens: usable?.tokens ?? 0,
              coveredThroughSeq: undo.coveredThroughSeq,
              revision: undo.summaryRevision,
            }
          : null;
      Object.assign(thread, {
        contextStartSeq: undo.contextStartSeq,
        summaryEncoding: undo.summaryEncoding,
        contextResetUndo: null,
        version: thread.version + 1,
      });
      return toThread(thread);
    },

    async forget({ threadId, messageIds }) {
      const thread = threadRow(threadId);
      const rows = messagesOf(threadId).filter((message) => messageIds.includes(message.id) && !message.deleted);
      const ids = rows.map((row) => row.id);
      const seqs = rows.flatMap((row) => (row.seq === null ? [] : [row.seq]));
      const now = new Date();
      if (seqs.length > 0 && database.titleSources.get(threadId) === 'auto' && madeOfForgotten(threadId, seqs)) {
        Object.assign(thread, { title: 'New chat', updatedAt: now });
        database.titleSources.delete(threadId);
      }
      for (const row of rows)
        Object.assign(row, { content: '', toolCalls: null, deleted: true, pinned: false, updatedAt: now });
      database.entries = database.entries.filter((entry) => entry.threadId !== threadId || !seqs.includes(entry.seq));
      // The saved memories a forgotten message asked for go with it.
      database.savedMemories = database.savedMemories.filter(
        (item) => item.sourceMessageId === null || !ids.includes(item.sourceMessageId),
      );
      const runIds = rows.flatMap((row) => (row.toolRunId ? [row.toolRunId] : []));
      for (const run of database.toolRuns) {
        if (run.threadId !== threadId) continue;
        if (ids.includes(run.messageId) || runIds.includes(run.id))
          Object.assign(run, {
            result: null,
            condensed: null,
            args: {},
            progressNote: null,
            error: run.error === null ? null : RUN_ERROR_FORGOTTEN,
          });
        // Runs not reported yet may have read the forgotten messages: cancelled, their result discarded.
        if (run.reportedAt === null) {
          Object.assign(run, {
            status: 'cancelled',
            cancelRequested: true,
            result: null,
            resultTokens: null,
            condensed: null,
            error: RUN_DISCARDED,
            finishedAt: run.finishedAt ?? now,
          });
        }
      }
      // Summaries are progressive: a revision may hold every message from its lineage's context start on.
      let redactedRevisions = 0;
      for (const revision of database.revisions) {
        if (revision.threadId !== threadId || revision.redacted) continue;
        if (seqs.some((seq) => seq >= (revision.contextStartSeq ?? 1) && seq <= revision.throughSeq)) {
          Object.assign(revision, { text: '', redacted: true });
          redactedRevisions += 1;
        }
      }
      const covered =
        thread.summary !== null &&
        thread.summary.revision > 0 &&
        seqs.some((seq) => seq >= thread.contextStartSeq && seq <= (thread.summary?.coveredThroughSeq ?? 0));
      if (covered && thread.summary) thread.summary = { ...thread.summary, text: '', tokens: 0 };
      thread.version += 1;
      return { messages: byIds(ids), thread: toThread(thread), redactedRevisions };
    },

    async queueRegenerate({ threadId, userMessageId }) {
      const thread = threadRow(threadId);
      if (
        database.turns.some(
          (turn) => turn.threadId === threadId && (turn.status === 'queued' || turn.status === 'running'),
        )
      ) {
        throw new AppError('BUSY', 'An answer is still being written; wait for it (or stop it), then regenerate.');
      }
      const user = messagesOf(threadId).find(
        (message) => message.id === userMessageId && message.role === 'user' && !message.deleted,
      );
      if (!user || user.seq === null) throw new AppError('NOT_FOUND', 'No such message to answer again.');
      const userSeq = user.seq;
      if (
        messagesOf(threadId).some(
          (message) => message.role === 'user' && message.seq !== null && message.seq > userSeq && !message.deleted,
        )
      ) {
        throw new AppError('CONFLICT', 'Only the answer to the last message can be regenerated.');
      }
      const before = new Set(
        messagesOf(threadId)
          .filter((message) => message.superseded)
          .map((message) => message.id),
      );
      supersedeAnswersAfter(database, threadId, userSeq);
      const superseded = messagesOf(threadId)
        .filter((message) => message.superseded && !before.has(message.id))
        .map((message) => message.id);
      const turn = {
        id: crypto.randomUUID(),
        threadId,
        kind: 'regenerate' as const,
        userMessageId,
        status: 'queued' as const,
        error: null,
        createdAt: new Date(),
        startedAt: null,
        finishedAt: null,
      };
      database.turns.push(turn);
      thread.version += 1;
      return { turn: copy(turn), superseded: byIds(superseded) };
    },

    async lastUserMessage(threadId) {
      const last = messagesOf(threadId)
        .filter((message) => message.role === 'user' && message.seq !== null && !message.deleted)
        .sort(bySeq)
        .at(-1);
      return last ? toMessage(last) : null;
    },

    async threadsAwaitingRebuild(limit) {
      return [...database.threads.values()]
        .filter(
          (thread) =>
            thread.summary !== null &&
            thread.summary.revision > 0 &&
            thread.summary.text === '' &&
            thread.summary.coveredThroughSeq >= thread.contextStartSeq,
        )
        .slice(0, limit)
        .map((thread) => ({ threadId: thread.id, version: thread.version }));
    },
  };
}
