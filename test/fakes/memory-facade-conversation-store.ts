import { isDeepStrictEqual } from 'node:util';
import { BRANCH_TAIL_CHARS, type FacadeConversationStore } from '../../src/core/ports';
import { createMemoryClientHistoryStore } from './memory-client-history-store';
import { copy, newId, toMessage, type MemoryDatabase, type MessageRow } from './memory-database';

/**
 * FacadeConversationStore in memory (test/contracts/facade-conversation-store.contract.ts holds it to the Postgres
 * repository's behaviour): the facade_conversations table and the reads of threads, turns and call records it needs;
 * its `history` is the in-memory ClientHistoryStore over the same tables.
 */
export function createMemoryFacadeConversationStore(database: MemoryDatabase): FacadeConversationStore {
  /** The end of the branch's last user or assistant text a client saw, as the repository's lateral read. */
  const lastTextTail = (threadId: string): string | null => {
    const last = database.messages
      .filter(
        (message) =>
          message.threadId === threadId &&
          message.seq !== null &&
          (message.role === 'user' || message.role === 'assistant') &&
          message.content !== '' &&
          (message.status === 'complete' || message.status === 'cancelled') &&
          !message.superseded &&
          !message.deleted &&
          message.toolRunId === null,
      )
      .sort((a, b) => (b.seq ?? 0) - (a.seq ?? 0))[0];
    // right(content, n) counts characters (code points), not UTF-16 units.
    return last ? Array.from(last.content).slice(-BRANCH_TAIL_CHARS).join('') : null;
  };

  return {
    history: createMemoryClientHistoryStore(database),

    async threadsOf({ userId, clientKey, limit }) {
      return database.conversations
        .map((row, index) => ({ row, index, thread: database.threads.get(row.threadId) }))
        .filter(({ row, thread }) => thread && row.userId === userId && row.clientKey === clientKey)
        .sort(
          (a, b) =>
            (b.thread?.lastActivityAt.getTime() ?? 0) - (a.thread?.lastActivityAt.getTime() ?? 0) || b.index - a.index,
        )
        .slice(0, limit)
        .map(({ row }) => ({ threadId: row.threadId, lastTextTail: lastTextTail(row.threadId) }));
    },

    async link({ userId, clientKey, threadId }) {
      if (!database.threads.has(threadId)) throw new Error(`foreign key: no thread ${threadId}`);
      const linked = database.conversations.some(
        (row) => row.userId === userId && row.clientKey === clientKey && row.threadId === threadId,
      );
      if (!linked) database.conversations.push({ userId, clientKey, threadId });
    },

    async setClientSettings({ threadId, settings }) {
      const thread = database.threads.get(threadId);
      if (!thread || isDeepStrictEqual(thread.settings.openaiClient, settings)) return;
      thread.settings = { ...thread.settings, openaiClient: copy(settings) };
      thread.version += 1;
      thread.updatedAt = new Date();
    },

    async appendMessages({ threadId, ownerId, messages }) {
      const thread = database.threads.get(threadId);
      if (!thread || thread.ownerId !== ownerId) return { refused: 'missing' as const };
      const active = database.turns.some(
        (turn) => turn.threadId === threadId && (turn.status === 'queued' || turn.status === 'running'),
      );
      if (active) return { refused: 'busy' as const };
      const now = new Date();
      const appended = messages.map((message) => {
        thread.lastSeq += 1;
        const toolCalls = message.role === 'assistant' && message.toolCalls.length > 0 ? copy(message.toolCalls) : null;
        const toolCallId = message.role === 'tool' ? message.toolCallId : null;
        const row: MessageRow = {
          id: newId(),
          threadId,
          seq: thread.lastSeq,
          role: message.role,
          content: message.content,
          toolCalls,
          toolCallId,
          status: 'complete',
          error: null,
          tokens: message.tokens,
          encoding: message.encoding,
          clientMessageId: null,
          turnId: null,
          toolRunId: null,
          pinned: false,
          superseded: false,
          deleted: false,
          createdAt: now,
          updatedAt: now,
          completedAt: now,
        };
        database.messages.push(row);
        database.entries.push({
          threadId,
          seq: row.seq!,
          messageId: row.id,
          role: message.role,
          content: message.content,
          tokens: message.tokens,
          encoding: message.encoding,
          ...(toolCalls ? { toolCalls } : {}),
          ...(toolCallId ? { toolCallId } : {}),
        });
        return toMessage(row);
      });
      // A later message makes a fresh context final: its undo no longer matches the thread's last seq.
      thread.lastActivityAt = now;
      thread.updatedAt = now;
      return { appended };
    },

    async setConversationMetadata({ threadId, metadata }) {
      const thread = database.threads.get(threadId);
      if (!thread) return;
      thread.settings = { ...thread.settings, conversationMetadata: copy(metadata) };
      thread.updatedAt = new Date();
    },

    async activeTurns(userId) {
      return database.turns.filter(
        (turn) =>
          (turn.status === 'queued' || turn.status === 'running') &&
          database.threads.get(turn.threadId)?.ownerId === userId,
      ).length;
    },

    async cancelQueuedTurn(turnId) {
      const turn = database.turns.find((row) => row.id === turnId && row.status === 'queued');
      if (!turn) return false;
      turn.cancelRequested = true;
      return true;
    },

    async usageOfTurn(turnId) {
      // The calls stored with the turn's messages (a fork's copy: with the message it copies).
      const messageIds = new Set(
        database.messages
          .filter((message) => message.turnId === turnId)
          .map((message) => message.originMessageId ?? message.id),
      );
      const calls = database.calls.filter(
        (call) => call.purpose === 'chat' && call.messageId !== null && messageIds.has(call.messageId),
      );
      const sum = (values: (number | null | undefined)[]) => {
        const reported = values.filter((value): value is number => typeof value === 'number');
        return reported.length === 0 ? null : reported.reduce((total, value) => total + value, 0);
      };
      return {
        promptTokens: sum(calls.map((call) => call.reportedPromptTokens)) ?? 0,
        completionTokens: sum(calls.map((call) => call.reportedCompletionTokens)) ?? 0,
        cachedTokens: sum(calls.map((call) => call.reportedCachedTokens)),
        cacheWriteTokens: sum(calls.map((call) => call.reportedCacheWriteTokens)),
      };
    },
  };
}
