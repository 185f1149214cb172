import type { ContextPack } from '../context';
import { ModelCallError } from '../errors/model-call-error';
import type {
  ChatCallRecord,
  ChatResult,
  LogPort,
  ModelCallRecord,
  ModelCallStore,
  PromptDivergence,
  PromptFingerprints,
} from '../ports';

interface ChatCallInput {
  threadId: string;
  messageId: string | null;
  model: string;
  pack: ContextPack;
  toolSchemaTokens: number;
  startedAt: number;
  usage: ChatResult['usage'];
  overflowRetry: boolean;
  promptDivergence?: PromptDivergence | null;
  promptFingerprints?: PromptFingerprints | null;
}

/** The figures and pack references of one chat call. */
function chatCallFigures(input: ChatCallInput): ModelCallRecord {
  const { pack } = input;
  return {
    threadId: input.threadId,
    messageId: input.messageId,
    purpose: 'chat',
    model: input.model,
    estimatedPromptTokens: pack.tokens + input.toolSchemaTokens,
    reportedPromptTokens: input.usage?.promptTokens ?? null,
    reportedCompletionTokens: input.usage?.completionTokens ?? null,
    reportedCachedTokens: input.usage?.cachedTokens ?? null,
    reportedCacheWriteTokens: input.usage?.cacheWriteTokens ?? null,
    promptDivergence: input.promptDivergence ?? null,
    promptFingerprints: input.promptFingerprints ?? null,
    latencyMs: Date.now() - input.startedAt,
    summaryRevision: pack.manifest.summaryRevision,
    windowFromSeq: pack.manifest.windowFromSeq,
    windowThroughSeq: pack.manifest.windowThroughSeq,
    pinnedSeqs: pack.manifest.pinnedSeqs,
    recalledSeqs: pack.manifest.recalledSeqs,
    omitted: pack.omitted,
    overflowRetry: input.overflowRetry,
    error: null,
  };
}

/** Records a failed chat call (no answer to store it with); a failing record is logged, never fails the turn. */
export async function recordChatCall(
  input: ChatCallInput & { error?: unknown },
  deps: { calls: ModelCallStore; log: LogPort },
): Promise<void> {
  try {
    await deps.calls.record({
      ...chatCallFigures(input),
      error: input.error
        ? input.error instanceof ModelCallError
          ? `${input.error.kind}: ${input.error.message}`
          : String(input.error)
        : null,
    });
  } catch (error) {
    deps.log.warn({ err: error }, 'could not record the model call');
  }
}

/** The record of a chat call that produced an answer, with what the model was given (see ChatCallManifest). */
export function chatCallRecord(input: ChatCallInput & { messageId: string; systemPrefix: string }): ChatCallRecord {
  const { manifest } = input.pack;
  return {
    ...chatCallFigures(input),
    purpose: 'chat',
    manifest: {
      systemPrefix: { text: input.systemPrefix, tokens: manifest.parts.systemPrefix },
      windowSeqs: manifest.windowSeqs,
      toolResults: manifest.toolResults,
      parts: { ...manifest.parts, toolSchemas: input.toolSchemaTokens },
      savedMemoryIds: manifest.savedMemoryIds,
      recalledElsewhere: manifest.recalledElsewhere,
      recallNote: manifest.recallNote ?? null,
    },
  };
}
