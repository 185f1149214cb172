import type { ModelCallStore } from '../core/ports';
import type { Database } from './prisma-client';

export function createModelCallRepository(db: Database): ModelCallStore {
  return {
    async record(call) {
      await db.modelCall.create({
        data: {
          threadId: call.threadId,
          messageId: call.messageId,
          purpose: call.purpose,
          model: call.model,
          estimatedPromptTokens: call.estimatedPromptTokens,
          reportedPromptTokens: call.reportedPromptTokens,
          reportedCompletionTokens: call.reportedCompletionTokens,
          latencyMs: call.latencyMs,
          summaryRevision: call.summaryRevision ?? null,
          windowFromSeq: call.windowFromSeq ?? null,
          windowThroughSeq: call.windowThroughSeq ?? null,
          pinnedSeqs: call.pinnedSeqs ?? [],
          omitted: call.omitted ?? 0,
          overflowRetry: call.overflowRetry ?? false,
          error: call.error ?? null,
        },
      });
    },
  };
}
