import type { AdminThreadDto, AuditEntryDto, SummaryRevisionDto, SummaryRevisionInfoDto } from '../../shared/admin-api';
import type { AdminThreadRow, AuditEntry, SummaryRevisionRecord } from '../ports';
import { diffStats, lineDiff } from '../summary/line-diff';
import { segmentedSummary } from '../summary/summary-segments';

/** Admin domain rows -> admin DTOs. */
export function toAdminThreadDto(row: AdminThreadRow): AdminThreadDto {
  return {
    id: row.id,
    title: row.title,
    owner: { id: row.ownerId, kind: row.ownerKind },
    createdAt: row.createdAt.toISOString(),
    lastActivityAt: row.lastActivityAt.toISOString(),
    memoryMode: row.memoryMode,
    messageCount: row.messageCount,
    summary: {
      preview: row.summaryPreview,
      tokens: row.summaryTokens,
      revision: row.summaryRevision,
      coveredThroughSeq: row.coveredThroughSeq,
    },
    windowEntries: row.windowEntries,
    windowTokens: row.windowTokens,
    foldLagEntries: row.foldLagEntries,
    lastFoldAt: row.lastFoldAt?.toISOString() ?? null,
    lastFoldError: row.lastFoldError,
  };
}

export function toRevisionInfoDto(record: SummaryRevisionRecord): SummaryRevisionInfoDto {
  return {
    revision: record.revision,
    author: record.author,
    authorId: record.authorId,
    tokens: record.tokens,
    fromSeq: record.fromSeq,
    throughSeq: record.throughSeq,
    model: record.model,
    tokensIn: record.tokensIn,
    tokensOut: record.tokensOut,
    durationMs: record.durationMs,
    identifiersKept: record.identifiersKept,
    identifiersTotal: record.identifiersTotal,
    segments: segmentedSummary(record.text, record.segmentEnds).segmentEnds.length,
    redacted: record.redacted,
    createdAt: record.createdAt.toISOString(),
  };
}

/** Revisions (ascending) with each one's line diff against the one before it; `previous` precedes the first. */
export function toRevisionDtos(
  records: readonly SummaryRevisionRecord[],
  previous: SummaryRevisionRecord | null,
): SummaryRevisionDto[] {
  let before = previous?.text ?? '';
  return records.map((record) => {
    const diff = lineDiff(before, record.text);
    before = record.text;
    return { ...toRevisionInfoDto(record), text: record.text, diff, diffStats: diffStats(diff) };
  });
}

export function toAuditEntryDto(entry: AuditEntry): AuditEntryDto {
  return {
    id: entry.id,
    actor: entry.actor,
    action: entry.action,
    threadId: entry.threadId,
    details: entry.details,
    createdAt: entry.createdAt.toISOString(),
  };
}
