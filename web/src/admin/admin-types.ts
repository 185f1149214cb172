import type { ContextPackDto, ThreadDto } from '../../../src/shared/api';

/**
 * Shapes of the admin API (issue 6) as the console reads them. Fields the console does not need are left out,
 * and everything it reads is optional-tolerant where the server may omit it.
 */
export type AdminThreadSort = 'activity' | 'summary' | 'lag' | 'errors';

export interface AdminThreadRowDto {
  id: string;
  title: string;
  ownerId: string;
  lastActivityAt: string;
  messageCount: number;
  summaryPreview: string;
  summaryTokens: number;
  summaryRevision: number;
  windowTokens: number;
  foldLagEntries: number;
  lastFoldAt: string | null;
  lastFoldError: string | null;
}

export interface AdminThreadPageDto {
  threads: AdminThreadRowDto[];
  nextCursor: string | null;
}

export interface SummaryRevisionDto {
  revision: number;
  author: string;
  authorId: string | null;
  text: string;
  tokens: number;
  fromSeq: number;
  throughSeq: number;
  model: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  durationMs: number | null;
  redacted?: boolean;
  createdAt: string;
}

export interface AdminThreadDetailDto {
  thread: ThreadDto & { ownerId?: string };
  pack: ContextPackDto;
  transcript: { messages: number; tokens: number };
}

export interface QueueCountsDto {
  waiting: number;
  active: number;
  failed: number;
  delayed?: number;
  completed?: number;
}
