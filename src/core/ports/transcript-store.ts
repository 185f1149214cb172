import type { ContextEntry } from '../context/types';
import type { TranscriptMessage } from '../domain/types';

export interface TranscriptStore {
  /** Ascending seq; with neither bound, the newest page. Pending (queued) messages come last. */
  listMessages(input: {
    threadId: string;
    before?: number;
    after?: number;
    limit: number;
  }): Promise<{ messages: TranscriptMessage[]; hasMoreBefore: boolean; hasMoreAfter: boolean }>;
  findMessage(threadId: string, messageId: string): Promise<TranscriptMessage | null>;
  listTurnMessages(turnId: string): Promise<TranscriptMessage[]>;
  /**
   * The transcript rendered as context entries for a summary rebuild: messages with seq in [fromSeq, throughSeq]
   * that carry content (complete or cancelled; not forgotten, not superseded), ascending seq, tokens recounted by the caller.
   */
  listSummarizableEntries(input: { threadId: string; fromSeq: number; throughSeq: number }): Promise<ContextEntry[]>;
}
