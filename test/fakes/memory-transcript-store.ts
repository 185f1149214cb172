import type { TranscriptStore } from '../../src/core/ports';
import { toEntry, toMessage, type MemoryDatabase, type MessageRow } from './memory-database';

const bySeq = (a: MessageRow, b: MessageRow) => (a.seq ?? Infinity) - (b.seq ?? Infinity);

/** TranscriptStore in memory (test/contracts/transcript-store.contract.ts holds it to the Postgres repository's behaviour). */
export function createMemoryTranscriptStore(database: MemoryDatabase): TranscriptStore {
  const ofThread = (threadId: string) => database.messages.filter((message) => message.threadId === threadId);
  const pendingOf = (threadId: string) => ofThread(threadId).filter((message) => message.seq === null);
  return {
    async listMessages({ threadId, before, after, limit }) {
      const stored = ofThread(threadId)
        .filter((message) => message.seq !== null)
        .sort(bySeq);
      if (after !== undefined) {
        // Catch-up reads: everything after `after`, then the messages still waiting in the queue.
        const later = stored.filter((message) => (message.seq ?? 0) > after);
        const hasMoreAfter = later.length > limit;
        const pending = hasMoreAfter ? [] : pendingOf(threadId);
        const hasMoreBefore = after > 0 && stored.some((message) => (message.seq ?? 0) <= after);
        return { messages: [...later.slice(0, limit), ...pending].map(toMessage), hasMoreBefore, hasMoreAfter };
      }
      const earlier = stored.filter((message) => before === undefined || (message.seq ?? 0) < before);
      const page = earlier.slice(Math.max(0, earlier.length - limit));
      const hasMoreBefore = earlier.length > limit;
      if (before !== undefined) {
        const hasMoreAfter = ofThread(threadId).some((message) => message.seq === null || message.seq >= before);
        return { messages: page.map(toMessage), hasMoreBefore, hasMoreAfter };
      }
      return { messages: [...page, ...pendingOf(threadId)].map(toMessage), hasMoreBefore, hasMoreAfter: false };
    },
    async findMessage(threadId, messageId) {
      const found = database.messages.find((message) => message.id === messageId && message.threadId === threadId);
      return found ? toMessage(found) : null;
    },
    async listTurnMessages(turnId) {
      return database.messages
        .filter((message) => message.turnId === turnId && message.role !== 'user')
        .sort(bySeq)
        .map(toMessage);
    },
    async listSummarizableEntries({ threadId, fromSeq, throughSeq }) {
      return ofThread(threadId)
        .filter((message) => message.seq !== null && message.seq >= fromSeq && message.seq <= throughSeq)
        .filter(
          (message) =>
            !message.deleted && !message.superseded && ['complete', 'cancelled', 'error'].includes(message.status),
        )
        .filter((message) => message.content.length > 0 || Array.isArray(message.toolCalls))
        .sort(bySeq)
        .map((message) =>
          toEntry({
            ...message,
            seq: message.seq ?? 0,
            pinned: false,
            encoding: message.encoding ?? '',
            toolCalls: message.toolCalls ?? undefined,
            toolCallId: message.toolCallId ?? undefined,
          }),
        );
    },
  };
}
