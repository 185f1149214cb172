import type { TranscriptMessage } from '../domain/types';
import type { SummaryRevisionRecord } from './summary-store';

/** Batched reads of the export: a thread of any size is read a page at a time. */
export interface ExportReader {
  /** Messages with seq > afterSeq, ascending, at most `limit` (pending ones are not part of the transcript yet). */
  messagesAfter(input: { threadId: string; afterSeq: number; limit: number }): Promise<TranscriptMessage[]>;
  /** Summary revisions with revision > afterRevision, ascending, at most `limit` (redacted ones without text). */
  revisionsAfter(input: { threadId: string; afterRevision: number; limit: number }): Promise<SummaryRevisionRecord[]>;
}
