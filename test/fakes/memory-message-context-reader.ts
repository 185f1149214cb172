import { createHash } from 'node:crypto';
import { AppError } from '../../src/core/errors/app-error';
import type { ChatCallManifest, MessageContextReader, ModelCallRecord } from '../../src/core/ports';
import type { SeenMessageDto, SeenToolResultDto } from '../../src/shared/api';
import { copy, type MemoryDatabase, type MessageRow } from './memory-database';

/** A stored call: a chat call stored with its answer keeps its manifest (TurnStore.finishMessage); a recorded one has none. */
type StoredCall = ModelCallRecord & { manifest?: ChatCallManifest };

/** A manifest's tool result as stored: a forget since marks it (the Postgres repository drops its text there). */
type StoredToolResult = ChatCallManifest['toolResults'][number] & { forgotten?: boolean };

type MessageContext = Awaited<ReturnType<MessageContextReader['forMessage']>>;

/**
 * MessageContextReader in memory (test/contracts/message-context-reader.contract.ts holds it to the Postgres reader's
 * behaviour): the newest chat call stored with the answer (a fork's copy: with the message it copies), read against
 * the tables as they are now. The call's time is its answer's completion (Postgres: the same statement's `now()`).
 */
export function createMemoryMessageContextReader(database: MemoryDatabase): MessageContextReader {
  return {
    async forMessage(threadId, messageId, options) {
      const message = database.messages.find((row) => row.id === messageId && row.threadId === threadId);
      const producedBy = message ? (message.originMessageId ?? message.id) : null;
      const call = (database.calls as StoredCall[]).findLast(
        (row) => producedBy !== null && row.messageId === producedBy && row.purpose === 'chat',
      );
      if (!call)
        throw new AppError(
          'NOT_FOUND',
          'No model call produced this message (only answers of the assistant have one).',
        );
      const produced = database.messages.find((row) => row.id === producedBy);
      const manifest = call.manifest;
      const elsewhere = manifest?.recalledElsewhere ?? [];
      return {
        messageId,
        model: call.model,
        at: (produced?.completedAt ?? new Date()).toISOString(),
        estimatedPromptTokens: call.estimatedPromptTokens,
        reportedPromptTokens: call.reportedPromptTokens,
        reportedCompletionTokens: call.reportedCompletionTokens,
        reportedCachedTokens: call.reportedCachedTokens ?? null,
        reportedCacheWriteTokens: call.reportedCacheWriteTokens ?? null,
        promptDivergence: call.promptDivergence ? copy(call.promptDivergence) : null,
        overflowRetry: call.overflowRetry ?? false,
        omitted: call.omitted ?? 0,
        systemPrefix: manifest
          ? {
              hash: createHash('sha256').update(manifest.systemPrefix.text).digest('hex'),
              text: options.systemPromptText ? manifest.systemPrefix.text : null,
              tokens: manifest.systemPrefix.tokens,
            }
          : null,
        summary: summaryOf(database, threadId, call.summaryRevision ?? null),
        windowSeqs: [...(manifest?.windowSeqs ?? [])],
        pinnedSeqs: [...(call.pinnedSeqs ?? [])],
        recalledSeqs: [...(call.recalledSeqs ?? [])],
        recalledElsewhere: elsewhere.map((ref) => ({
          threadId: ref.threadId,
          seq: ref.seq,
          title: database.threads.get(ref.threadId)?.title ?? null,
        })),
        savedMemories: (manifest?.savedMemoryIds ?? []).map((id) => ({
          id,
          text: database.savedMemories.find((item) => item.id === id)?.text ?? null,
        })),
        ...seenOf(database, threadId, call),
        parts: manifest ? copy(manifest.parts) : null,
      };
    },
  };
}

/** The revision of the requested thread the call was given (a fork's own copy), its text gone once redacted. */
function summaryOf(database: MemoryDatabase, threadId: string, revision: number | null): MessageContext['summary'] {
  if (revision === null || revision <= 0) return null;
  const row = database.revisions.find((item) => item.threadId === threadId && item.revision === revision);
  if (!row) return null;
  return {
    revision,
    text: row.redacted ? null : row.text,
    tokens: row.tokens,
    fromSeq: Math.max(1, row.contextStartSeq ?? row.fromSeq),
    throughSeq: row.throughSeq,
    redacted: row.redacted,
  };
}

/** The messages the call was given, by place (pinned, recalled, window), and its tool results; a forgotten one without content. */
function seenOf(
  database: MemoryDatabase,
  threadId: string,
  call: StoredCall,
): Pick<MessageContext, 'messages' | 'toolResults'> {
  const bySeq = new Map<number, MessageRow>();
  for (const row of database.messages) if (row.threadId === threadId && row.seq !== null) bySeq.set(row.seq, row);
  // A seq with no message left, or a forgotten one, shows as forgotten: nothing of its content is served.
  const forgotten = (seq: number) => bySeq.get(seq)?.deleted ?? true;
  const seen = (seq: number, place: SeenMessageDto['place']): SeenMessageDto => {
    const message = bySeq.get(seq);
    const gone = forgotten(seq);
    return {
      seq,
      role: message?.role ?? 'user',
      place,
      messageId: message?.id ?? null,
      forgotten: gone,
      content: gone ? null : (message?.content ?? null),
    };
  };
  const toolResults = ((call.manifest?.toolResults ?? []) as StoredToolResult[]).map((result): SeenToolResultDto => {
    const gone = result.forgotten === true || forgotten(result.seq);
    return {
      seq: result.seq,
      role: result.role,
      toolCallId: result.toolCallId,
      content: gone ? null : result.content,
      tokens: result.tokens,
      forgotten: gone,
    };
  });
  return {
    messages: [
      ...(call.pinnedSeqs ?? []).map((seq) => seen(seq, 'pinned')),
      ...(call.recalledSeqs ?? []).map((seq) => seen(seq, 'recalled')),
      ...(call.manifest?.windowSeqs ?? []).map((seq) => seen(seq, 'window')),
    ],
    toolResults,
  };
}
