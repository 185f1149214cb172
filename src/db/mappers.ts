import type { ContextEntry, ToolCall } from '../core/context/types';
import type {
  MessageStatus,
  Thread,
  ThreadSettings,
  TranscriptMessage,
  Turn,
  TurnKind,
  TurnStatus,
} from '../core/domain/types';
import type { SummaryRevisionRecord, ToolRun, ToolRunStatus } from '../core/ports';
import type {
  ContextEntry as ContextEntryRow,
  Message as MessageRow,
  SummaryRevision as SummaryRevisionRow,
  Thread as ThreadRow,
  ToolRun as ToolRunRow,
  Turn as TurnRow,
} from './generated/client';

/** Row <-> domain converters. Prisma rows stop here. */

function toolCallsOf(value: unknown): ToolCall[] | null {
  return Array.isArray(value) ? (value as ToolCall[]) : null;
}

function errorOf(value: unknown): { code: string; message: string } | null {
  if (value && typeof value === 'object' && 'code' in value && 'message' in value) {
    return { code: String(value.code), message: String(value.message) };
  }
  return null;
}

export function toThread(row: ThreadRow): Thread {
  return {
    id: row.id,
    ownerId: row.ownerId,
    title: row.title,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    lastActivityAt: row.lastActivityAt,
    lastSeq: row.lastSeq,
    summary:
      row.summaryRevision > 0 || row.summaryText
        ? {
            text: row.summaryText,
            tokens: row.summaryTokens,
            coveredThroughSeq: row.summaryCoveredThroughSeq,
            revision: row.summaryRevision,
            segmentEnds: row.summarySegmentEnds ?? [],
          }
        : null,
    summaryEncoding: row.summaryEncoding,
    contextStartSeq: row.contextStartSeq,
    memoryMode: row.memoryMode === 'window-only' ? 'window-only' : 'summary',
    settings: (row.settings ?? {}) as ThreadSettings,
    version: row.version,
    lastFoldAt: row.lastFoldAt,
    lastFoldError: row.lastFoldError,
    // A parent deleted since keeps the fork's seq (its thread id is then null).
    forkedFrom:
      row.forkedFromSeq !== null && row.forkedFromSeq !== undefined
        ? { threadId: row.forkedFromThreadId ?? null, seq: row.forkedFromSeq }
        : null,
  };
}

export function toMessage(row: MessageRow): TranscriptMessage {
  return {
    id: row.id,
    threadId: row.threadId,
    seq: row.seq,
    role: row.role as TranscriptMessage['role'],
    content: row.content,
    toolCalls: toolCallsOf(row.toolCalls),
    toolCallId: row.toolCallId,
    status: row.status as MessageStatus,
    error: errorOf(row.error),
    tokens: row.tokens,
    clientMessageId: row.clientMessageId,
    turnId: row.turnId,
    toolRunId: row.toolRunId,
    pinned: row.pinned,
    superseded: row.superseded,
    deleted: row.deletedAt !== null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    completedAt: row.completedAt,
  };
}

export function toEntry(row: ContextEntryRow): ContextEntry {
  const entry: ContextEntry = {
    seq: row.seq,
    role: row.role as ContextEntry['role'],
    content: row.content,
    tokens: row.tokens,
  };
  if (row.encoding === 'o200k_base' || row.encoding === 'cl100k_base') entry.tokenEncoding = row.encoding;
  const toolCalls = toolCallsOf(row.toolCalls);
  if (toolCalls) entry.toolCalls = toolCalls;
  if (row.toolCallId) entry.toolCallId = row.toolCallId;
  if (row.pinned) entry.pinned = true;
  return entry;
}

/**
 * The turn row's fields the domain keeps (raw SQL selects just these: TURN_COLUMNS); `cancelRequested` may be left
 * out (a row built in memory, or selected without it).
 */
type TurnFields = Pick<
  TurnRow,
  'id' | 'threadId' | 'kind' | 'userMessageId' | 'status' | 'error' | 'createdAt' | 'startedAt' | 'finishedAt'
> & { cancelRequested?: boolean };

export function toTurn(row: TurnFields): Turn {
  return {
    id: row.id,
    threadId: row.threadId,
    kind: row.kind as TurnKind,
    userMessageId: row.userMessageId,
    status: row.status as TurnStatus,
    error: errorOf(row.error),
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    ...(row.cancelRequested ? { cancelRequested: true } : {}),
  };
}

export function toToolRun(row: ToolRunRow): ToolRun {
  return {
    id: row.id,
    threadId: row.threadId,
    messageId: row.messageId,
    toolCallId: row.toolCallId,
    name: row.name,
    args: (row.args ?? {}) as Record<string, unknown>,
    status: row.status as ToolRunStatus,
    progress: row.progress,
    progressNote: row.progressNote,
    result: row.result,
    resultTokens: row.resultTokens,
    condensed: row.condensed,
    error: row.error,
    startedAtSeq: row.startedAtSeq,
    cancelRequested: row.cancelRequested,
    attempts: row.attempts,
    reportedAt: row.reportedAt,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    taskId: row.taskId,
    deadlineAt: row.deadlineAt,
    remoteCancelledAt: row.remoteCancelledAt,
    handedAt: row.handedAt,
  };
}

/** A summary revision; a redacted one keeps its metadata and has no text. */
export function toRevisionRecord(row: SummaryRevisionRow): SummaryRevisionRecord {
  return {
    revision: row.revision,
    author: row.author as SummaryRevisionRecord['author'],
    authorId: row.authorId,
    text: row.redactedAt ? '' : row.text,
    segmentEnds: row.redactedAt ? [] : row.segmentEnds,
    tokens: row.tokens,
    fromSeq: row.fromSeq,
    throughSeq: row.throughSeq,
    model: row.model,
    tokensIn: row.tokensIn,
    tokensOut: row.tokensOut,
    durationMs: row.durationMs,
    identifiersKept: row.identifiersKept,
    identifiersTotal: row.identifiersTotal,
    redacted: row.redactedAt !== null,
    createdAt: row.createdAt,
  };
}
