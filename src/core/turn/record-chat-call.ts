import type { ContextPack } from '../context';
import { ModelCallError } from '../model-call-error';
import type { LogPort, ModelCallStore } from '../ports';

/** Records one chat call with its pack manifest; a failing record is logged, never fails the turn. */
export async function recordChatCall(
  input: { threadId: string; messageId: string | null; model: string; pack: ContextPack; toolSchemaTokens: number; startedAt: number; usage: { promptTokens: number; completionTokens: number } | null; overflowRetry: boolean; error?: unknown },
  deps: { calls: ModelCallStore; log: LogPort },
): Promise<void> {
  const { pack } = input;
  try {
    await deps.calls.record({
      threadId: input.threadId,
      messageId: input.messageId,
      purpose: 'chat',
      model: input.model,
      estimatedPromptTokens: pack.tokens + input.toolSchemaTokens,
      reportedPromptTokens: input.usage?.promptTokens ?? null,
      reportedCompletionTokens: input.usage?.completionTokens ?? null,
      latencyMs: Date.now() - input.startedAt,
      summaryRevision: pack.manifest.summaryRevision,
      windowFromSeq: pack.manifest.windowFromSeq,
      windowThroughSeq: pack.manifest.windowThroughSeq,
      pinnedSeqs: pack.manifest.pinnedSeqs,
      recalledSeqs: pack.manifest.recalledSeqs,
      omitted: pack.omitted,
      overflowRetry: input.overflowRetry,
      error: input.error ? (input.error instanceof ModelCallError ? `${input.error.kind}: ${input.error.message}` : String(input.error)) : null,
    });
  } catch (error) {
    deps.log.warn({ err: error }, 'could not record the model call');
  }
}
