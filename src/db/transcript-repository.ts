import type { TranscriptStore } from '../core/ports';
import { Prisma, type Message as MessageRow } from './generated/client';
import type { Database } from './prisma-client';
import { toEntry, toMessage } from './mappers';
import { MESSAGE_COLUMNS, qualified } from './sql-columns';

export function createTranscriptRepository(db: Database): TranscriptStore {
  /**
   * The messages still waiting in the thread's queue, in the order they were accepted (their turns' accept_seq, the
   * order they will take seqs in): created_at ties within a millisecond.
   */
  const pendingOf = (threadId: string) =>
    db.sql.rows<MessageRow>(Prisma.sql`
      SELECT ${qualified(MESSAGE_COLUMNS, 'm')} FROM messages m LEFT JOIN turns t ON t.id = m.turn_id
      WHERE m.thread_id = ${threadId}::uuid AND m.seq IS NULL
      ORDER BY t.accept_seq NULLS LAST, m.created_at, m.id`);
  return {
    async listMessages({ threadId, before, after, limit }) {
      if (after !== undefined) {
        // Catch-up reads: everything after `after`, plus messages still waiting in the queue.
        const rows = await db.message.findMany({
          where: { threadId, seq: { gt: after } },
          orderBy: { seq: 'asc' },
          take: limit + 1,
        });
        const hasMoreAfter = rows.length > limit;
        const messages = rows.slice(0, limit).map(toMessage);
        const pending = hasMoreAfter ? [] : await pendingOf(threadId);
        const hasMoreBefore =
          after > 0 && (await db.message.count({ where: { threadId, seq: { lte: after } }, take: 1 })) > 0;
        return { messages: [...messages, ...pending.map(toMessage)], hasMoreBefore, hasMoreAfter };
      }
      // Newest page, or the page before `before`: read backwards, return ascending.
      const rows = await db.message.findMany({
        where: { threadId, seq: before !== undefined ? { lt: before } : { not: null } },
        orderBy: { seq: 'desc' },
        take: limit + 1,
      });
      const hasMoreBefore = rows.length > limit;
      const messages = rows.slice(0, limit).reverse().map(toMessage);
      if (before !== undefined) {
        const hasMoreAfter =
          (await db.message.count({ where: { threadId, OR: [{ seq: { gte: before } }, { seq: null }] }, take: 1 })) > 0;
        return { messages, hasMoreBefore, hasMoreAfter };
      }
      const pending = await pendingOf(threadId);
      return { messages: [...messages, ...pending.map(toMessage)], hasMoreBefore, hasMoreAfter: false };
    },
    async findMessage(threadId, messageId) {
      const row = await db.message.findFirst({ where: { id: messageId, threadId } });
      return row ? toMessage(row) : null;
    },
    async listTurnMessages(turnId) {
      const rows = await db.message.findMany({ where: { turnId, role: { not: 'user' } }, orderBy: { seq: 'asc' } });
      return rows.map(toMessage);
    },
    async listSummarizableEntries({ threadId, fromSeq, throughSeq }) {
      const rows = await db.message.findMany({
        where: {
          threadId,
          seq: { gte: fromSeq, lte: throughSeq },
          deletedAt: null,
          superseded: false,
          status: { in: ['complete', 'cancelled', 'error'] },
        },
        orderBy: { seq: 'asc' },
      });
      return rows
        .filter((row) => row.content.length > 0 || Array.isArray(row.toolCalls))
        .map((row) =>
          toEntry({ ...row, seq: row.seq ?? 0, messageId: row.id, pinned: false, encoding: row.encoding ?? '' }),
        );
    },
  };
}
