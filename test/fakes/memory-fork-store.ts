import type { ForkStore } from '../../src/core/ports';
import type { Turn } from '../../src/core/domain/types';
import {
  copy,
  newId,
  toThread,
  type EntryRow,
  type MemoryDatabase,
  type MessageRow,
  type ThreadRow,
} from './memory-database';
import { createMemoryTurnStore } from './memory-turn-store';

/**
 * The context start the parent had at the fork point: its own when not after it; else (a fresh context came later) the
 * latest start at or before it that a summary revision or the pending undo remembers.
 */
function startAt(database: MemoryDatabase, parent: ThreadRow, throughSeq: number): number {
  if (parent.contextStartSeq <= throughSeq) return parent.contextStartSeq;
  const remembered = database.revisions
    .filter((revision) => revision.threadId === parent.id && (revision.contextStartSeq ?? 1) <= throughSeq)
    .map((revision) => revision.contextStartSeq ?? 1);
  const undo = parent.contextResetUndo?.contextStartSeq;
  return Math.max(1, ...remembered, ...(undo !== undefined && undo <= throughSeq ? [undo] : []));
}

/**
 * ForkStore in memory (test/contracts/fork-store.contract.ts holds it to the Postgres repository's one statement).
 * Unlike the repository, a window entry a later fold of the parent deleted is rebuilt from the copied message only
 * (the repository prefers a tool result's text as it entered a pack, from the model call manifests).
 */
export function createMemoryForkStore(database: MemoryDatabase): ForkStore {
  const owned = (ownerId: string) =>
    [...database.threads.values()].filter((thread) => thread.ownerId === ownerId).length;
  /** Removes everything a fork wrote: the rollback of forkWithMessage's transaction. */
  const dropFork = (forkId: string) => {
    database.threads.delete(forkId);
    database.titleSources.delete(forkId);
    for (const table of ['messages', 'entries', 'turns', 'revisions', 'toolRuns'] as const) {
      const rows = database[table] as { threadId: string }[];
      for (let index = rows.length - 1; index >= 0; index -= 1)
        if (rows[index]?.threadId === forkId) rows.splice(index, 1);
    }
  };
  const store: ForkStore = {
    async forkWithMessage({ message, ...fork }) {
      // Synchronous from the look-up to the fork: as serialized as the repository's lock.
      const earlier = message.clientMessageId
        ? await store.findForkByClientMessageId({ parentId: fork.parentId, clientMessageId: message.clientMessageId })
        : null;
      if (earlier) return { existing: earlier };
      const written = await store.forkThread(fork);
      if (!('thread' in written)) return written;
      try {
        const accepted = await createMemoryTurnStore(database).acceptUserMessage({
          threadId: written.thread.id,
          ownerId: fork.ownerId,
          ...message,
        });
        return { thread: written.thread, accepted };
      } catch (error) {
        dropFork(written.thread.id);
        throw error;
      }
    },
    async forkThread({ parentId, ownerId, throughSeq, title, maxThreads }) {
      const parent = database.threads.get(parentId);
      const count = owned(ownerId);
      const messages = database.messages.filter(
        (message) => message.threadId === parentId && message.seq !== null && message.seq <= throughSeq,
      );
      const activeTurns = new Set(
        database.turns
          .filter((turn) => turn.threadId === parentId && (turn.status === 'queued' || turn.status === 'running'))
          .map((turn) => turn.id),
      );
      const busy = messages.some(
        (message) =>
          (message.turnId !== null && activeTurns.has(message.turnId)) ||
          message.status === 'streaming' ||
          message.status === 'pending',
      );
      if (!parent || parent.lastSeq < throughSeq || count >= maxThreads || busy)
        return { refused: count >= maxThreads ? 'quota' : 'busy', owned: count };

      const start = startAt(database, parent, throughSeq);
      const chosen = database.revisions
        .filter(
          (revision) =>
            revision.threadId === parentId &&
            revision.throughSeq <= throughSeq &&
            !revision.redacted &&
            (revision.contextStartSeq ?? 1) === start,
        )
        .sort((a, b) => b.revision - a.revision)[0];
      const now = new Date();
      const fork: ThreadRow = {
        id: newId(),
        ownerId: parent.ownerId,
        title,
        createdAt: now,
        updatedAt: now,
        lastActivityAt: now,
        lastSeq: throughSeq,
        summary: chosen
          ? {
              text: chosen.text,
              tokens: chosen.tokens,
              coveredThroughSeq: chosen.throughSeq,
              revision: chosen.revision,
            }
          : null,
        summaryEncoding: chosen ? parent.summaryEncoding : null,
        contextStartSeq: start,
        memoryMode: parent.memoryMode,
        settings: copy(parent.settings),
        version: 0,
        lastFoldAt: null,
        lastFoldError: null,
        forkedFrom: { threadId: parent.id, seq: throughSeq },
        lease: null,
      };
      database.threads.set(fork.id, fork);
      // A branch of a thread titled by hand or automatically has a title of its own, not the default one.
      if (database.titleSources.has(parent.id)) database.titleSources.set(fork.id, 'auto');
      const covered = chosen?.throughSeq ?? start - 1;

      const turnIds = new Map<string, string>();
      const messageIds = new Map<string, string>(messages.map((message) => [message.id, newId()]));
      for (const turn of database.turns.filter(
        (candidate) => candidate.threadId === parentId && messages.some((message) => message.turnId === candidate.id),
      )) {
        const copied: Turn = {
          ...copy(turn),
          id: newId(),
          threadId: fork.id,
          userMessageId: turn.userMessageId ? (messageIds.get(turn.userMessageId) ?? null) : null,
        };
        turnIds.set(turn.id, copied.id);
        database.turns.push(copied);
      }
      const runIds = new Map<string, string>();
      for (const message of messages) {
        const run =
          message.role === 'system' && message.toolRunId
            ? database.toolRuns.find((candidate) => candidate.id === message.toolRunId)
            : undefined;
        if (!run) continue;
        const id = newId();
        runIds.set(run.id, id);
        database.toolRuns.push({
          ...copy(run),
          id,
          threadId: fork.id,
          messageId: messageIds.get(run.messageId) ?? run.messageId,
          followUpTurnId: run.followUpTurnId ? (turnIds.get(run.followUpTurnId) ?? null) : null,
        });
      }
      for (const message of messages) {
        const copied: MessageRow = {
          ...copy(message),
          id: messageIds.get(message.id) as string,
          threadId: fork.id,
          clientMessageId: null,
          turnId: message.turnId ? (turnIds.get(message.turnId) ?? null) : null,
          toolRunId: message.toolRunId ? (runIds.get(message.toolRunId) ?? null) : null,
          pinned: message.pinned && (message.seq ?? 0) >= start,
          originMessageId: message.originMessageId ?? message.id,
        };
        database.messages.push(copied);
      }

      // The window: the parent's entries from the start through the fork point, pinned or after the summary; an entry a
      // later fold deleted comes back from its (live, finished) message.
      const entries: EntryRow[] = [];
      for (const message of messages) {
        const seq = message.seq as number;
        const entry = database.entries.find((candidate) => candidate.threadId === parentId && candidate.seq === seq);
        if (entry) {
          if (seq >= start && (entry.pinned || seq > covered))
            entries.push({ ...copy(entry), threadId: fork.id, messageId: messageIds.get(message.id) ?? null });
          continue;
        }
        const finished = message.status === 'complete' || (message.status === 'cancelled' && message.content !== '');
        if (
          seq > covered &&
          seq >= start &&
          !message.deleted &&
          !message.superseded &&
          (message.content !== '' || message.toolCalls !== null) &&
          finished
        ) {
          entries.push({
            threadId: fork.id,
            seq,
            messageId: messageIds.get(message.id) ?? null,
            role: message.role,
            content: message.content,
            tokens: message.tokens,
            encoding: message.encoding ?? 'o200k_base',
            pinned: false,
            ...(message.toolCalls ? { toolCalls: copy(message.toolCalls) } : {}),
            ...(message.toolCallId ? { toolCallId: message.toolCallId } : {}),
          });
        }
      }
      database.entries.push(...entries);
      for (const revision of database.revisions.filter(
        (row) =>
          row.threadId === parentId && row.revision <= (fork.summary?.revision ?? 0) && row.throughSeq <= throughSeq,
      )) {
        database.revisions.push({ ...copy(revision), threadId: fork.id });
      }
      return { thread: toThread(fork) };
    },

    async listForks(threadId) {
      return [...database.threads.values()]
        .filter((thread) => thread.forkedFrom?.threadId === threadId)
        .sort(
          (a, b) =>
            (a.forkedFrom?.seq ?? 0) - (b.forkedFrom?.seq ?? 0) || a.createdAt.getTime() - b.createdAt.getTime(),
        )
        .map((thread) => ({
          threadId: thread.id,
          title: thread.title,
          seq: thread.forkedFrom?.seq ?? 0,
          createdAt: new Date(thread.createdAt),
        }));
    },

    async findForkByClientMessageId({ parentId, clientMessageId }) {
      const forks = new Set(
        [...database.threads.values()]
          .filter((thread) => thread.forkedFrom?.threadId === parentId)
          .map((thread) => thread.id),
      );
      return (
        database.messages.find((message) => forks.has(message.threadId) && message.clientMessageId === clientMessageId)
          ?.threadId ?? null
      );
    },

    async listCopies({ messageIds, ownerId }) {
      const asked = database.messages.filter((message) => messageIds.includes(message.id));
      const askedThreads = new Set(asked.map((message) => message.threadId));
      const roots = new Map(asked.map((message) => [message.id, message.originMessageId ?? message.id]));
      const found = new Map<string, { threadId: string; title: string; messageId: string; seq: number }>();
      for (const [id, root] of roots) {
        for (const message of database.messages) {
          const thread = database.threads.get(message.threadId);
          if (
            message.id === id ||
            (message.id !== root && message.originMessageId !== root) ||
            !thread ||
            thread.ownerId !== ownerId
          )
            continue;
          if (message.deleted || message.seq === null || askedThreads.has(message.threadId)) continue;
          found.set(message.id, { threadId: thread.id, title: thread.title, messageId: message.id, seq: message.seq });
        }
      }
      return [...found.values()].sort((a, b) => (a.messageId < b.messageId ? -1 : 1));
    },
  };
  return store;
}
