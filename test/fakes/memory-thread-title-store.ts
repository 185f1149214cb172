import type { ThreadTitleStore } from '../../src/core/ports';
import { toThread, type MemoryDatabase } from './memory-database';

/**
 * ThreadTitleStore in memory (test/contracts/thread-title-store.contract.ts holds it to the Postgres repository's
 * behaviour): a thread is titled by default until a rename, an automatic title or a titled parent (`titleSources`).
 */
export function createMemoryThreadTitleStore(database: MemoryDatabase): ThreadTitleStore {
  const untitled = (threadId: string) => {
    const thread = database.threads.get(threadId);
    return thread && !database.titleSources.has(threadId) ? thread : undefined;
  };
  return {
    async firstExchange(threadId) {
      const thread = untitled(threadId);
      if (!thread) return null;
      const live = database.messages
        .filter((message) => message.threadId === threadId && message.seq !== null && !message.deleted)
        .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
      const user = live.find((message) => message.role === 'user');
      if (!user?.content) return null;
      const answer = live.find(
        (message) =>
          message.role === 'assistant' &&
          message.status === 'complete' &&
          (message.seq ?? 0) > (user.seq ?? 0) &&
          !message.superseded &&
          message.content !== '',
      );
      return {
        userText: user.content,
        answerText: answer?.content ?? null,
        branch: thread.forkedFrom !== null,
        openaiClient: thread.settings.openaiClient !== undefined,
      };
    },
    async setAutomaticTitle(threadId, title) {
      const thread = untitled(threadId);
      if (!thread) return null;
      thread.title = title;
      thread.updatedAt = new Date();
      database.titleSources.set(threadId, 'auto');
      return toThread(thread);
    },
  };
}
