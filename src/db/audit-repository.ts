import type { AuditEntry, AuditStore, Page } from '../core/ports';
import type { Prisma } from './generated/client';
import type { Database } from './prisma-client';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';
import { storableJson } from './storable-values';

export function createAuditRepository(db: Database): AuditStore {
  return {
    async record({ actor, action, threadId, details = {} }) {
      await db.auditLog.create({
        data: { actor, action, threadId, details: storableJson(details) as Prisma.InputJsonObject },
      });
    },
    async list({ threadId, cursor, limit }): Promise<Page<AuditEntry>> {
      const after = cursor ? decodeKeysetCursor(cursor) : null;
      const rows = await db.auditLog.findMany({
        where: {
          ...(threadId ? { threadId } : {}),
          ...(after ? { OR: [{ createdAt: { lt: after.at } }, { createdAt: after.at, id: { lt: after.id } }] } : {}),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: limit + 1,
      });
      const items: AuditEntry[] = rows.slice(0, limit).map((row) => ({
        id: row.id,
        actor: row.actor,
        action: row.action,
        threadId: row.threadId,
        details:
          row.details && typeof row.details === 'object' && !Array.isArray(row.details)
            ? (row.details as Record<string, unknown>)
            : {},
        createdAt: row.createdAt,
      }));
      const last = items.at(-1);
      return {
        items,
        nextCursor: rows.length > limit && last ? encodeKeysetCursor({ at: last.createdAt, id: last.id }) : null,
      };
    },
  };
}
