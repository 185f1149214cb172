import type { AuditEntry, AuditStore, Page } from '../core/ports';
import type { Prisma } from './generated/client';
import type { Database } from './prisma-client';

/** Cursor over (created_at desc, id desc), opaque to clients. */
function encodeCursor(entry: AuditEntry): string {
  return Buffer.from(`${entry.createdAt.toISOString()}|${entry.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: Date; id: string } | null {
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const date = new Date(at ?? '');
  return id && /^[0-9a-f-]{36}$/i.test(id) && !Number.isNaN(date.getTime()) ? { at: date, id } : null;
}

export function createAuditRepository(db: Database): AuditStore {
  return {
    async record({ actor, action, threadId, details = {} }) {
      await db.auditLog.create({ data: { actor, action, threadId, details: details as Prisma.InputJsonObject } });
    },
    async list({ threadId, cursor, limit }): Promise<Page<AuditEntry>> {
      const after = cursor ? decodeCursor(cursor) : null;
      const rows = await db.auditLog.findMany({
        where: {
          ...(threadId ? { threadId } : {}),
          ...(after ? { OR: [{ createdAt: { lt: after.at } }, { createdAt: after.at, id: { lt: after.id } }] } : {}),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: limit + 1,
      });
      const items: AuditEntry[] = rows.slice(0, limit).map((row) => ({
        id: row.id, actor: row.actor, action: row.action, threadId: row.threadId,
        details: row.details && typeof row.details === 'object' && !Array.isArray(row.details) ? (row.details as Record<string, unknown>) : {},
        createdAt: row.createdAt,
      }));
      const last = items.at(-1);
      return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
    },
  };
}
