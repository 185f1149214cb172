import { clientToolsOf } from '../context/client-instructions';
import type { Thread } from '../domain/types';
import type { ClientHistoryStore, ClientViewRow } from '../ports';
import { clientViewOf, type StoredItem } from './client-view';

/**
 * The `limit` rows of `thread` ending at `throughSeq` (none when it is 0) and the client's view of them, in which the
 * calls of the thread's client tools show. With `storedResults`, a tool result stored with a prefix hash (one a
 * client sent) counts as a client tool's result; otherwise none does.
 */
export async function readRowsThrough(
  history: ClientHistoryStore,
  thread: Thread,
  options: { throughSeq: number; limit: number; storedResults?: boolean },
): Promise<{ rows: ClientViewRow[]; view: StoredItem[] }> {
  const { throughSeq, limit } = options;
  const rows =
    throughSeq > 0
      ? await history.readRows({ threadId: thread.id, fromSeq: Math.max(1, throughSeq - limit + 1), throughSeq, limit })
      : [];
  const clientTools = new Set(clientToolsOf(thread).map((tool) => tool.function.name));
  const clientResults = new Set(
    options.storedResults
      ? rows.flatMap((row) =>
          row.message.role === 'tool' && row.prefixHash !== null && row.message.toolCallId !== null
            ? [row.message.toolCallId]
            : [],
        )
      : [],
  );
  const view = clientViewOf(
    rows.map((row) => row.message),
    { isClientCall: (name) => clientTools.has(name), clientResults },
  );
  return { rows, view };
}
