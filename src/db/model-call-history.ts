import type { ModelCallPointDto } from '../shared/api';
import type { Database } from './prisma-client';

/** Read model of a thread's model calls for the admin tokens chart. */
export interface ModelCallHistory {
  /** Oldest first, at most `limit` calls. */
  listForThread(threadId: string, limit?: number): Promise<ModelCallPointDto[]>;
}

interface CallRow {
  created_at: Date;
  purpose: string;
  model: string;
  prompt_tokens: number;
  transcript_tokens: number;
  through_seq: number;
}

/**
 * Each call with the transcript as it stood when the call was made: every stored message before the answered
 * one (by seq), or, for calls without a message (summaries), every message stored before the call.
 */
export function createModelCallHistory(db: Database): ModelCallHistory {
  return {
    async listForThread(threadId, limit = 2000) {
      const rows = await db.$queryRaw<CallRow[]>`
        SELECT c.created_at, c.purpose, c.model, c.estimated_prompt_tokens AS prompt_tokens,
               t.tokens AS transcript_tokens, t.through_seq
        FROM model_calls c
        LEFT JOIN messages answered ON answered.id = c.message_id
        CROSS JOIN LATERAL (
          SELECT COALESCE(SUM(m.tokens), 0)::int AS tokens, COALESCE(MAX(m.seq), 0)::int AS through_seq
          FROM messages m
          WHERE m.thread_id = c.thread_id AND m.seq IS NOT NULL
            AND CASE WHEN answered.seq IS NOT NULL THEN m.seq < answered.seq ELSE m.created_at <= c.created_at END
        ) t
        WHERE c.thread_id = ${threadId}::uuid
        ORDER BY c.created_at ASC
        LIMIT ${limit}`;
      return rows.map((row) => ({
        at: row.created_at.toISOString(),
        purpose: row.purpose as ModelCallPointDto['purpose'],
        model: row.model,
        promptTokens: row.prompt_tokens,
        transcriptTokens: row.transcript_tokens,
        throughSeq: row.through_seq,
      }));
    },
  };
}
