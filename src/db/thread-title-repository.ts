import type { ThreadTitleStore } from '../core/ports';
import type { Thread as ThreadRow } from './generated/client';
import { toThread } from './mappers';
import type { Database } from './prisma-client';
import { THREAD_COLUMNS } from './sql-columns';

/** Automatic titles: the first exchange of a thread still titled by default, and the conditional title write. */
export function createThreadTitleRepository(db: Database): ThreadTitleStore {
  return {
    async firstExchange(threadId) {
      const rows = await db.$queryRaw<
        { userText: string | null; answerText: string | null; branch: boolean; openaiClient: boolean }[]
      >`
        SELECT u.content AS "userText",
          (SELECT a.content FROM messages a
            WHERE a.thread_id = t.id AND a.role = 'assistant' AND a.status = 'complete' AND a.seq > u.seq
              AND a.deleted_at IS NULL AND NOT a.superseded AND a.content <> ''
            ORDER BY a.seq LIMIT 1) AS "answerText",
          t.forked_from_seq IS NOT NULL AS branch, (t.settings -> 'openaiClient') IS NOT NULL AS "openaiClient"
        FROM threads t
        LEFT JOIN LATERAL (
          SELECT m.content, m.seq FROM messages m
          WHERE m.thread_id = t.id AND m.role = 'user' AND m.seq IS NOT NULL AND m.deleted_at IS NULL
          ORDER BY m.seq LIMIT 1
        ) u ON true
        WHERE t.id = ${threadId}::uuid AND t.title_source = 'default'`;
      const row = rows[0];
      if (!row?.userText) return null;
      return { userText: row.userText, answerText: row.answerText, branch: row.branch, openaiClient: row.openaiClient };
    },
    async setAutomaticTitle(threadId, title) {
      const rows = await db.$queryRaw<ThreadRow[]>`
        UPDATE threads SET title = ${title}, title_source = 'auto', updated_at = now()
        WHERE id = ${threadId}::uuid AND title_source = 'default'
        RETURNING ${THREAD_COLUMNS}`;
      return rows[0] ? toThread(rows[0]) : null;
    },
  };
}
