import type { Thread } from '../core/domain/types';
import type { Page, ThreadStore } from '../core/ports';
import type { Database } from './prisma-client';
import { decodeKeysetCursor, encodeKeysetCursor, UUID } from './keyset-cursor';
import type { Thread as ThreadRow } from './generated/client';
import { toThread } from './mappers';
import { THREAD_COLUMNS } from './sql-columns';
import { claimThreadSlot } from './thread-quota';
import { keepModelCallsOf } from './keep-model-calls';

export function createThreadRepository(db: Database): ThreadStore {
  return {
    async ensureUser(userId, kind) {
      await db.user.upsert({ where: { id: userId }, create: { id: userId, kind }, update: {} });
    },
    async createThread({ ownerId, title, maxThreads }) {
      return toThread(
        await db.$transaction(async (tx) => {
          await claimThreadSlot(tx, ownerId, maxThreads);
          return tx.thread.create({ data: { ownerId, ...(title ? { title, titleSource: 'user' } : {}) } });
        }),
      );
    },
    async findThread(threadId, ownerId) {
      // On every request: one raw statement (no ORM query planning). A malformed id is simply not found.
      if (!UUID.test(threadId)) return null;
      const rows = await db.$queryRaw<ThreadRow[]>`
        SELECT ${THREAD_COLUMNS} FROM threads WHERE id = ${threadId}::uuid AND (${ownerId}::text IS NULL OR owner_id = ${ownerId}::text)`;
      return rows[0] ? toThread(rows[0]) : null;
    },
    async listThreads({ ownerId, cursor, limit }): Promise<Page<Thread>> {
      const after = cursor ? decodeKeysetCursor(cursor) : null;
      const rows = await db.thread.findMany({
        where: {
          ownerId,
          ...(after
            ? { OR: [{ lastActivityAt: { lt: after.at } }, { lastActivityAt: after.at, id: { lt: after.id } }] }
            : {}),
        },
        orderBy: [{ lastActivityAt: 'desc' }, { id: 'desc' }],
        take: limit + 1,
      });
      const items = rows.slice(0, limit).map(toThread);
      const last = items.at(-1);
      return {
        items,
        nextCursor: rows.length > limit && last ? encodeKeysetCursor({ at: last.lastActivityAt, id: last.id }) : null,
      };
    },
    async renameThread(threadId, title) {
      // A user's title: an automatic one (core/titles) is only ever written over the default.
      return toThread(await db.thread.update({ where: { id: threadId }, data: { title, titleSource: 'user' } }));
    },
    async deleteThread(threadId) {
      if (!UUID.test(threadId)) return;
      // Messages, entries, summaries, tool runs and turns cascade; the call records stay, detached (keepModelCallsOf).
      await db.$transaction([
        db.$queryRaw`SELECT id FROM threads WHERE id = ${threadId}::uuid FOR UPDATE`,
        db.$executeRaw(keepModelCallsOf([threadId], { anonymise: false })),
        db.$executeRaw`DELETE FROM threads WHERE id = ${threadId}::uuid`,
      ]);
    },
    async countMessages(threadId) {
      return db.message.count({ where: { threadId } });
    },
  };
}
