import { AppError } from '../../src/core/errors/app-error';
import type { AuditStore } from '../../src/core/ports';
import { copy, newId, type MemoryDatabase } from './memory-database';

/** The cursor of a page: the last entry's (time, id), like the repository's keyset cursor. */
interface Cursor {
  at: number;
  id: string;
}

function decode(cursor: string): Cursor {
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (rest.length > 0 || !id || Number.isNaN(Number(at)))
    throw new AppError('VALIDATION', 'Invalid cursor: pass the nextCursor of the previous page unchanged.');
  return { at: Number(at), id };
}

/** AuditStore in memory (test/contracts/audit-store.contract.ts holds it to the Postgres repository's behaviour). */
export function createMemoryAuditStore(database: MemoryDatabase): AuditStore {
  return {
    async record({ actor, action, threadId, details = {} }) {
      database.audit.push({ id: newId(), actor, action, threadId, details: copy(details), createdAt: new Date() });
    },
    async list({ threadId, cursor, limit }) {
      const after = cursor ? decode(cursor) : null;
      // Newest first; entries of one millisecond keep the reverse of their insertion order.
      const sorted = database.audit
        .map((entry, index) => ({ entry, index }))
        .filter(({ entry }) => !threadId || entry.threadId === threadId)
        .sort((a, b) => b.entry.createdAt.getTime() - a.entry.createdAt.getTime() || b.index - a.index);
      const start = after ? sorted.findIndex(({ entry }) => entry.id === after.id) + 1 : 0;
      const rows = sorted.slice(start, start + limit + 1).map(({ entry }) => copy(entry));
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      return {
        items,
        nextCursor:
          rows.length > limit && last
            ? Buffer.from(`${last.createdAt.getTime()}|${last.id}`).toString('base64url')
            : null,
      };
    },
  };
}
