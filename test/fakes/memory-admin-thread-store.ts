import { AppError } from '../../src/core/errors/app-error';
import type { AdminThreadRow, AdminThreadSort, AdminThreadStore, FoldLagPolicy } from '../../src/core/ports';
import type { MemoryDatabase, ThreadRow } from './memory-database';

const PREVIEW_CHARACTERS = 240;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Listed extends AdminThreadRow {
  sortKey: number;
}

function invalidCursor(): AppError {
  return new AppError('VALIDATION', 'Invalid cursor: pass the nextCursor of the previous page unchanged.');
}

function decodeCursor(cursor: string): { key: number; at: number; id: string } {
  let value: { key?: unknown; at?: unknown; id?: unknown } | null;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as typeof value;
  } catch {
    throw invalidCursor();
  }
  const at = new Date(String(value?.at)).getTime();
  if (typeof value?.key !== 'number' || Number.isNaN(at) || typeof value.id !== 'string' || !UUID.test(value.id))
    throw invalidCursor();
  return { key: value.key, at, id: value.id };
}

/** The window as the admin list counts it: unpinned entries after the summary and from the context start, newest first. */
function windowOf(database: MemoryDatabase, thread: ThreadRow) {
  const covered = thread.summary?.coveredThroughSeq ?? 0;
  return database.entries
    .filter(
      (entry) =>
        entry.threadId === thread.id && !entry.pinned && entry.seq > covered && entry.seq >= thread.contextStartSeq,
    )
    .sort((a, b) => b.seq - a.seq);
}

/** Entries beyond the keep policy while the trigger fires (see the repository's foldLagSql). */
function foldLag(thread: ThreadRow, window: { tokens: number }[], policy: FoldLagPolicy): number {
  const windowTokens = window.reduce((sum, entry) => sum + entry.tokens, 0);
  const fires =
    thread.memoryMode === 'summary' &&
    (windowTokens + (thread.summary?.tokens ?? 0) >= policy.minWindowTokens ||
      window.length >= policy.minWindowMessages);
  if (!fires) return 0;
  let running = 0;
  return window.filter((entry, index) => {
    running += entry.tokens;
    return policy.keep.kind === 'messages' ? index + 1 > policy.keep.value : running > policy.keep.value;
  }).length;
}

function sortKeyOf(row: AdminThreadRow, sort: AdminThreadSort): number {
  if (sort === 'summary') return row.summaryTokens;
  if (sort === 'errors') return row.lastFoldError === null ? 0 : 1;
  if (sort === 'lag') return row.foldLagEntries;
  return 0;
}

/** Descending (sort key, activity, id), the repository's ORDER BY. */
function compare(
  a: { sortKey: number; at: number; id: string },
  b: { sortKey: number; at: number; id: string },
): number {
  return b.sortKey - a.sortKey || b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** AdminThreadStore in memory (test/contracts/admin-thread-store.contract.ts holds it to the Postgres repository). */
export function createMemoryAdminThreadStore(database: MemoryDatabase): AdminThreadStore {
  const rowOf = (thread: ThreadRow, sort: AdminThreadSort, policy: FoldLagPolicy): Listed => {
    const window = windowOf(database, thread);
    const row: AdminThreadRow = {
      id: thread.id,
      title: thread.title,
      ownerId: thread.ownerId,
      ownerKind: database.users.get(thread.ownerId) === 'external' ? 'external' : 'guest',
      createdAt: new Date(thread.createdAt),
      lastActivityAt: new Date(thread.lastActivityAt),
      memoryMode: thread.memoryMode,
      messageCount: database.messages.filter((message) => message.threadId === thread.id).length,
      summaryPreview: (thread.summary?.text ?? '').slice(0, PREVIEW_CHARACTERS),
      summaryTokens: thread.summary?.tokens ?? 0,
      summaryRevision: thread.summary?.revision ?? 0,
      coveredThroughSeq: thread.summary?.coveredThroughSeq ?? 0,
      windowEntries: window.length,
      windowTokens: window.reduce((sum, entry) => sum + entry.tokens, 0),
      foldLagEntries: foldLag(thread, window, policy),
      lastFoldAt: thread.lastFoldAt ? new Date(thread.lastFoldAt) : null,
      lastFoldError: thread.lastFoldError,
    };
    return { ...row, sortKey: sortKeyOf(row, sort) };
  };

  return {
    async listThreads({ query, cursor, limit, sort, policy }) {
      const after = cursor ? decodeCursor(cursor) : null;
      const search = query?.trim().toLowerCase();
      const listed = [...database.threads.values()]
        .filter(
          (thread) =>
            !search ||
            thread.title.toLowerCase().includes(search) ||
            thread.ownerId.toLowerCase().includes(search) ||
            thread.id === search,
        )
        .map((thread) => rowOf(thread, sort, policy))
        .map((row) => ({ row, key: { sortKey: row.sortKey, at: row.lastActivityAt.getTime(), id: row.id } }))
        .filter(({ key }) => !after || compare({ sortKey: after.key, at: after.at, id: after.id }, key) < 0)
        .sort((a, b) => compare(a.key, b.key));
      const items = listed.slice(0, limit).map(({ row: { sortKey: _sortKey, ...row } }) => row);
      const last = listed[limit - 1];
      const nextCursor =
        listed.length > limit && last
          ? Buffer.from(
              JSON.stringify({ key: last.key.sortKey, at: new Date(last.key.at).toISOString(), id: last.key.id }),
            ).toString('base64url')
          : null;
      return { items, nextCursor };
    },

    async transcriptSize(threadId) {
      const thread = database.threads.get(threadId);
      const messages = database.messages.filter((message) => message.threadId === threadId);
      return {
        messages: messages.length,
        tokens: messages.reduce((sum, message) => sum + (message.tokens ?? 0), 0),
        characters: messages.reduce((sum, message) => sum + message.content.length, 0),
        lastSeq: thread?.lastSeq ?? 0,
      };
    },
  };
}
