import type { SummaryStore, ThreadStore, ToolRunStore, TranscriptStore, TurnStore } from '../../src/core/ports';
import { createMemoryDatabase, type MemoryDatabase } from './memory-database';
import { createMemorySummaryStore } from './memory-summary-store';
import { createMemoryThreadStore } from './memory-thread-store';
import { createMemoryToolRunStore } from './memory-tool-run-store';
import { createMemoryTranscriptStore } from './memory-transcript-store';
import { createMemoryTurnStore, type MemoryContextOptions } from './memory-turn-store';

/** The stores the turn, the fold and the tools use, over one database (Postgres repositories or the in-memory fakes). */
export interface Stores {
  threads: ThreadStore;
  transcript: TranscriptStore;
  turns: TurnStore;
  summaries: SummaryStore;
  toolRuns: ToolRunStore;
}

/**
 * Every in-memory store over one shared MemoryDatabase (`database`: its tables, for assertions); `context`: what the
 * turn store's context reads bring besides the entries (auto-recall, saved memories).
 */
export function createMemoryStores(
  database: MemoryDatabase = createMemoryDatabase(),
  context: MemoryContextOptions = {},
): Stores & { database: MemoryDatabase } {
  return {
    database,
    threads: createMemoryThreadStore(database),
    transcript: createMemoryTranscriptStore(database),
    turns: createMemoryTurnStore(database, context),
    summaries: createMemorySummaryStore(database),
    toolRuns: createMemoryToolRunStore(database),
  };
}
