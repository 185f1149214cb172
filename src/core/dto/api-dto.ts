import type { MessageDto, SearchHitDto, ThreadDto } from '../../shared/api';
import type { ErrorCode } from '../../shared/errors';
import type { Thread, TranscriptMessage } from '../domain/types';
import { isSummaryWithdrawn } from '../domain/types';
import type { MessageSearchHit } from '../ports';

/** Domain -> DTO, the only shape that reaches clients. */
export function toMessageDto(message: TranscriptMessage): MessageDto {
  return {
    id: message.id,
    threadId: message.threadId,
    seq: message.seq,
    role: message.role,
    content: message.deleted ? '' : message.content,
    toolCalls: message.deleted ? null : message.toolCalls,
    toolCallId: message.toolCallId,
    status: message.status,
    error: message.error ? { code: message.error.code as ErrorCode, message: message.error.message } : null,
    tokens: message.tokens,
    clientMessageId: message.clientMessageId,
    turnId: message.turnId,
    toolRunId: message.toolRunId,
    pinned: message.pinned,
    superseded: message.superseded,
    deleted: message.deleted,
    createdAt: message.createdAt.toISOString(),
    updatedAt: message.updatedAt.toISOString(),
    completedAt: message.completedAt?.toISOString() ?? null,
  };
}

export function toThreadDto(thread: Thread): ThreadDto {
  return {
    id: thread.id,
    title: thread.title,
    createdAt: thread.createdAt.toISOString(),
    updatedAt: thread.updatedAt.toISOString(),
    lastActivityAt: thread.lastActivityAt.toISOString(),
    memoryMode: thread.memoryMode,
    contextStartSeq: thread.contextStartSeq,
    settings: {
      trigger: thread.settings.trigger ?? null,
      keep: thread.settings.keep ?? null,
      summaryPrompt: thread.settings.summaryPrompt ?? null,
      recallTokens: thread.settings.recallTokens ?? null,
      recallScope: thread.settings.recallScope ?? null,
    },
    memoryRebuilding: isSummaryWithdrawn(thread),
    forkedFrom: thread.forkedFrom,
  };
}

/** A search hit as people's search routes answer it. */
export function toSearchHitDto(hit: MessageSearchHit): SearchHitDto {
  return {
    threadId: hit.threadId,
    threadTitle: hit.threadTitle,
    messageId: hit.messageId,
    seq: hit.seq,
    role: hit.role,
    createdAt: hit.createdAt.toISOString(),
    snippet: hit.snippet,
    highlights: hit.highlights,
    forkCopy: hit.forkCopy,
  };
}
