import type { SavedMemory, SavedMemoryStore } from '../core/ports';
import type { Database } from './prisma-client';
import { Prisma } from './generated/client';
import { UUID } from './keyset-cursor';

interface SavedMemoryRow {
  id: string;
  userId: string;
  text: string;
  tokens: number;
  sourceThreadId: string | null;
  sourceSeq: number | null;
  status: string;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS =
  Prisma.raw(`id, user_id AS "userId", text, tokens, source_thread_id AS "sourceThreadId", source_seq AS "sourceSeq", status,
  created_at AS "createdAt", updated_at AS "updatedAt"`);

function toSavedMemory(row: SavedMemoryRow): SavedMemory {
  return {
    id: row.id,
    userId: row.userId,
    text: row.text,
    tokens: row.tokens,
    source:
      row.sourceThreadId !== null && row.sourceSeq !== null
        ? { threadId: row.sourceThreadId, seq: row.sourceSeq }
        : null,
    status: row.status === 'pending' ? 'pending' : 'active',
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The user's saved memories (table saved_memories); every statement is scoped to the user. */
export function createSavedMemoryRepository(db: Database): SavedMemoryStore {
  return {
    async list(userId) {
      const rows = await db.$queryRaw<SavedMemoryRow[]>`
        SELECT ${COLUMNS} FROM saved_memories WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC`;
      return rows.map(toSavedMemory);
    },

    async create({ userId, text, tokens, source, maxItems, status }) {
      return db.$transaction(async (tx) => {
        // The user's lock, then the count (proposals included): exact under concurrent creations, across processes.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended('saved-memories-of:' || ${userId}::text, 0))`;
        const [count] = await tx.$queryRaw<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM saved_memories WHERE user_id = ${userId}`;
        if ((count?.n ?? 0) >= maxItems) return null;
        const rows = await tx.$queryRaw<SavedMemoryRow[]>`
          INSERT INTO saved_memories (id, user_id, text, tokens, source_thread_id, source_seq, source_message_id, status, created_at, updated_at)
          VALUES (gen_random_uuid(), ${userId}, ${text}, ${tokens}::int, ${source?.threadId ?? null}::uuid, ${source?.seq ?? null}::int,
            ${source?.messageId ?? null}::uuid, ${status}, clock_timestamp(), clock_timestamp())
          RETURNING ${COLUMNS}`;
        return rows[0] ? toSavedMemory(rows[0]) : null;
      });
    },

    async update({ userId, id, text, tokens }) {
      if (!UUID.test(id)) return null;
      const rows = await db.$queryRaw<SavedMemoryRow[]>`
        UPDATE saved_memories SET text = ${text}, tokens = ${tokens}::int, tokens_stale = false, updated_at = now()
        WHERE id = ${id}::uuid AND user_id = ${userId} RETURNING ${COLUMNS}`;
      return rows[0] ? toSavedMemory(rows[0]) : null;
    },

    async approve({ userId, id }) {
      if (!UUID.test(id)) return null;
      const rows = await db.$queryRaw<SavedMemoryRow[]>`
        UPDATE saved_memories SET status = 'active',
          updated_at = CASE WHEN status = 'pending' THEN now() ELSE updated_at END
        WHERE id = ${id}::uuid AND user_id = ${userId} RETURNING ${COLUMNS}`;
      return rows[0] ? toSavedMemory(rows[0]) : null;
    },

    async listStaleTokens(limit) {
      return db.$queryRaw<{ id: string; text: string }[]>`
        SELECT id::text, text FROM saved_memories WHERE tokens_stale ORDER BY id LIMIT ${limit}::int`;
    },

    async saveRecount({ id, text, tokens }) {
      await db.$executeRaw`
        UPDATE saved_memories SET tokens = ${tokens}::int, tokens_stale = false
        WHERE id = ${id}::uuid AND text = ${text} AND tokens_stale`;
    },

    async remove({ userId, id, status }) {
      if (!UUID.test(id)) return false;
      const inStatus = status ? Prisma.sql`AND status = ${status}` : Prisma.empty;
      return (
        (await db.$executeRaw`DELETE FROM saved_memories WHERE id = ${id}::uuid AND user_id = ${userId} ${inStatus}`) >
        0
      );
    },

    async sourceOfThread(threadId) {
      if (!UUID.test(threadId)) return null;
      const rows = await db.$queryRaw<{ userId: string; messageId: string | null; seq: number | null }[]>`
        SELECT t.owner_id AS "userId", m.id AS "messageId", m.seq
        FROM threads t LEFT JOIN LATERAL (
          SELECT id, seq FROM messages WHERE thread_id = t.id AND role = 'user' AND seq IS NOT NULL AND deleted_at IS NULL
          ORDER BY seq DESC LIMIT 1
        ) m ON true
        WHERE t.id = ${threadId}::uuid`;
      const row = rows[0];
      if (!row) return null;
      return {
        userId: row.userId,
        source:
          row.messageId !== null && row.seq !== null ? { threadId, seq: row.seq, messageId: row.messageId } : null,
      };
    },
  };
}
