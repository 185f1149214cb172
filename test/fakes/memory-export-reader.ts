import type { ExportReader } from '../../src/core/ports';
import { copy, toMessage, type MemoryDatabase } from './memory-database';

/** ExportReader in memory (test/contracts/export-reader.contract.ts holds it to the Postgres repository's behaviour). */
export function createMemoryExportReader(database: MemoryDatabase): ExportReader {
  return {
    async messagesAfter({ threadId, afterSeq, limit }) {
      return database.messages
        .filter((message) => message.threadId === threadId && message.seq !== null && message.seq > afterSeq)
        .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))
        .slice(0, limit)
        .map(toMessage);
    },
    async revisionsAfter({ threadId, afterRevision, limit }) {
      return database.revisions
        .filter((revision) => revision.threadId === threadId && revision.revision > afterRevision)
        .sort((a, b) => a.revision - b.revision)
        .slice(0, limit)
        .map(({ threadId: _threadId, contextStartSeq: _contextStartSeq, ...revision }) =>
          copy({ ...revision, text: revision.redacted ? '' : revision.text }),
        );
    },
  };
}
