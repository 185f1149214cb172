import type { ClientHistoryStore, PrefixHit } from '../core/ports';
import { chainHashes } from './client-prefix-hash';
import { toMessage } from './mappers';
import type { Database } from './prisma-client';

/** Hashes looked up first: a history that goes on its thread is found among its last few (one short statement). */
const RECENT_HASHES = 8;

/**
 * The /v1 history matching's reads (see ClientHistoryStore): index lookups on messages(thread_id, client_prefix_hash),
 * one per hash, and short ranges of (thread_id, seq).
 */
export function createClientHistoryRepository(db: Database): ClientHistoryStore {
  const lookUp = async (input: {
    threadId: string;
    hashes: readonly Uint8Array[];
    afterSeq: number;
    throughSeq: number;
  }) => {
    if (input.hashes.length === 0) return null;
    const hexes = input.hashes.map((hash) => Buffer.from(hash).toString('hex'));
    const rows = await db.$queryRaw<
      { seq: number; role: string; client_prefix_hash: Uint8Array; client_answer_from: number | null }[]
    >`
      SELECT m.seq, m.role, m.client_prefix_hash, m.client_answer_from
      FROM unnest(${hexes}::text[]) h(hex)
      CROSS JOIN LATERAL (
        SELECT seq, role, client_prefix_hash, client_answer_from FROM messages
        WHERE thread_id = ${input.threadId}::uuid AND client_prefix_hash = decode(h.hex, 'hex')
          AND seq > ${input.afterSeq}::int AND seq <= ${input.throughSeq}::int
        ORDER BY seq DESC LIMIT 1
      ) m
      ORDER BY m.seq DESC LIMIT 1`;
    const row = rows[0];
    if (!row) return null;
    return {
      seq: row.seq,
      role: row.role,
      prefixHash: new Uint8Array(row.client_prefix_hash),
      answerFrom: row.client_answer_from,
    } satisfies PrefixHit;
  };

  return {
    chainHashes,

    async findPrefix(input) {
      const recent = input.hashes.slice(-RECENT_HASHES);
      const hit = await lookUp({ ...input, hashes: recent });
      if (hit || recent.length === input.hashes.length) return hit;
      return lookUp({ ...input, hashes: input.hashes.slice(0, -RECENT_HASHES) });
    },

    async readRows({ threadId, fromSeq, throughSeq, limit }) {
      const rows = await db.message.findMany({
        where: { threadId, seq: { gte: fromSeq, lte: throughSeq } },
        orderBy: { seq: 'asc' },
        take: limit,
      });
      return rows.map((row) => ({
        message: toMessage(row),
        prefixHash: row.clientPrefixHash === null ? null : new Uint8Array(row.clientPrefixHash),
        answerFrom: row.clientAnswerFrom,
      }));
    },

    async writing(threadId) {
      const rows = await db.$queryRaw<{ writing: boolean }[]>`
        SELECT EXISTS (
          SELECT 1 FROM messages m
          WHERE m.thread_id = ${threadId}::uuid AND m.status = 'streaming' AND NOT client_view_hidden(m)
            AND (m.role <> 'tool' OR client_view_client_result(m))
        ) AS writing`;
      return rows[0]?.writing === true;
    },

    async userAfter({ threadId, afterSeq, throughSeq }) {
      const rows = await db.$queryRaw<{ found: boolean }[]>`
        SELECT EXISTS (
          SELECT 1 FROM messages m
          WHERE m.thread_id = ${threadId}::uuid AND m.seq > ${afterSeq}::int AND m.seq <= ${throughSeq}::int
            AND m.role = 'user' AND NOT client_view_hidden(m)
        ) AS found`;
      return rows[0]?.found === true;
    },
  };
}
