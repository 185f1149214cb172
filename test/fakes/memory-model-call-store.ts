import type { ModelCallRecord, ModelCallStore } from '../../src/core/ports';
import { copy, newId, type MemoryDatabase } from './memory-database';

/** ModelCallStore in memory: the calls table of the MemoryDatabase, with the defaults Postgres fills in. */
export function createMemoryModelCallStore(database: MemoryDatabase): ModelCallStore {
  return {
    async record(call) {
      if (call.threadId !== null && !database.threads.has(call.threadId))
        throw new Error(`foreign key: no thread ${call.threadId}`);
      database.calls.push({
        ...withDefaults(call),
        userId: callUser(database, call),
        id: newId(),
        createdAt: new Date(),
      });
    },
  };
}

/** A call record as stored: optional manifest fields absent become null, [] or 0 (the columns' defaults). */
export function withDefaults(call: ModelCallRecord): ModelCallRecord {
  return {
    ...copy(call),
    summaryRevision: call.summaryRevision ?? null,
    windowFromSeq: call.windowFromSeq ?? null,
    windowThroughSeq: call.windowThroughSeq ?? null,
    pinnedSeqs: call.pinnedSeqs ?? [],
    recalledSeqs: call.recalledSeqs ?? [],
    omitted: call.omitted ?? 0,
    overflowRetry: call.overflowRetry ?? false,
    error: call.error ?? null,
  };
}

/** The user a stored call names: the record's own, else its thread's owner (model_calls.user_id). */
export function callUser(database: MemoryDatabase, call: ModelCallRecord): string | null {
  return call.userId ?? (call.threadId === null ? null : (database.threads.get(call.threadId)?.ownerId ?? null));
}
