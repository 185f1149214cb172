import { randomUUID } from 'node:crypto';
import type { ContextEntry } from '../../src/core/context/types';
import type { Thread, TranscriptMessage, Turn } from '../../src/core/domain/types';
import type {
  AuditEntry,
  ErasureRecord,
  ModelCallRecord,
  SavedMemory,
  SummaryRevisionRecord,
  ToolRun,
} from '../../src/core/ports';
import type { SpendAmount, SpendLimit } from '../../src/core/spend/spend-limit';

/** A thread row: the domain thread plus the lease the turn store keeps on it. */
export interface ThreadRow extends Thread {
  lease: { owner: string; expiresAt: number } | null;
  /** What the last fresh context replaced, to undo it until the next message (MemoryControlsStore.resetContext). */
  contextResetUndo?: ContextResetUndo | null;
}

/** The thread's state before a fresh context, and its last seq then (any later message makes the reset final). */
export interface ContextResetUndo {
  contextStartSeq: number;
  coveredThroughSeq: number;
  summaryRevision: number;
  summaryEncoding: string | null;
  lastSeq: number;
}

/** A transcript row: the domain message plus what the store keeps beside it. */
export interface MessageRow extends TranscriptMessage {
  encoding: string | null;
  /** A fork's copy: the id of the message first written (the original has none). */
  originMessageId?: string | null;
}

/** A context entry row (the window and the pins of a thread). */
export interface EntryRow extends ContextEntry {
  threadId: string;
  messageId: string | null;
  encoding: string;
}

export interface RevisionRow extends SummaryRevisionRecord {
  threadId: string;
  /** Where the revision's lineage starts (the thread's context start at the commit): a forget from there on taints it. */
  contextStartSeq?: number;
}

/** A tool run row: the domain run plus the follow-up turn that delivers it and its last poll. */
export interface ToolRunRow extends ToolRun {
  followUpTurnId: string | null;
  polledAt: number | null;
}

/** A model_calls row: the record plus its id and when it was stored (the admin's read models page and group by them). */
export interface CallRow extends ModelCallRecord {
  id: string;
  createdAt: Date;
}

/** A saved memory row: the item plus the message it came from and whether its tokens await a recount. */
export interface SavedMemoryRow extends SavedMemory {
  sourceMessageId: string | null;
  tokensStale: boolean;
}

/** A facade_conversations row: a /v1 client's conversation key reached this thread. */
export interface ConversationRow {
  userId: string;
  clientKey: string;
  threadId: string;
}

/** spend_reservations: a send's hold (no turn yet) or a turn's reservation, with the accounts it holds on. */
export interface SpendReservationRow extends SpendAmount {
  id: string;
  userId: string;
  turnId: string | null;
  /** The accounts and, in the same order, their limits (null: none). */
  accounts: { account: string; limit: SpendLimit | null }[];
  expiresAt: Date;
  createdAt: Date;
}

/** A spend limit an admin set, with when. */
export interface SpendLimitRow {
  limit: SpendLimit;
  updatedAt: Date;
}

/** The spend tables (issue 35), as prisma/functions/spend_*.sql read and write them. */
export interface SpendTables {
  /** spend_limits of users and of service keys. */
  userLimits: Map<string, SpendLimitRow>;
  serviceKeyLimits: Map<string, SpendLimitRow>;
  /** spend_groups by name: the limit, and the members (user id to whether a token's group claim placed them). */
  groups: Map<string, { limit: SpendLimitRow | null; members: Map<string, boolean> }>;
  /** spend_guest_addresses: a guest's client address key. */
  guestAddresses: Map<string, string>;
  /** spend_accounts: what each account's reservations hold. */
  reserved: Map<string, SpendAmount>;
  /** spend_days: `${account} ${day}` to that day's spending. */
  days: Map<string, SpendAmount>;
  reservations: SpendReservationRow[];
}

/**
 * The tables the in-memory stores share, as Postgres holds them: one instance backs every fake store of a test, so
 * what one store writes the others read. Arrays keep insertion order (the order of `created_at` in Postgres).
 */
export interface MemoryDatabase {
  users: Map<string, 'guest' | 'external'>;
  threads: Map<string, ThreadRow>;
  messages: MessageRow[];
  entries: EntryRow[];
  turns: Turn[];
  /** turns.resumed_from_turn_id: a re-run's id to the interrupted turn it runs again (it took that turn's place). */
  resumedFrom: Map<string, string>;
  revisions: RevisionRow[];
  toolRuns: ToolRunRow[];
  /** Model calls: recorded ones and those stored with an answer (with the answer's message id). */
  calls: CallRow[];
  /** The admin audit trail (not tied to a thread's lifetime: a deleted thread's entries stay). */
  audit: AuditEntry[];
  savedMemories: SavedMemoryRow[];
  /** erased_users: the tombstones of erased users. */
  erasures: Map<string, ErasureRecord>;
  conversations: ConversationRow[];
  /** threads.title_source of threads not titled by default ('user': the user's own; 'auto': made from the first exchange). */
  titleSources: Map<string, 'user' | 'auto'>;
  spend: SpendTables;
}

export function createMemoryDatabase(): MemoryDatabase {
  return {
    users: new Map(),
    threads: new Map(),
    messages: [],
    entries: [],
    turns: [],
    resumedFrom: new Map(),
    revisions: [],
    toolRuns: [],
    calls: [],
    audit: [],
    savedMemories: [],
    erasures: new Map(),
    conversations: [],
    titleSources: new Map(),
    spend: {
      userLimits: new Map(),
      serviceKeyLimits: new Map(),
      groups: new Map(),
      guestAddresses: new Map(),
      reserved: new Map(),
      days: new Map(),
      reservations: [],
    },
  };
}

export const newId = (): string => randomUUID();

/** A copy the caller may keep or change without touching the table (Postgres returns fresh rows). */
export function copy<T>(value: T): T {
  return structuredClone(value);
}

export function toThread(row: ThreadRow): Thread {
  const { lease: _lease, ...thread } = row;
  return copy(thread);
}

export function toMessage(row: MessageRow): TranscriptMessage {
  const { encoding: _encoding, ...message } = row;
  return copy(message);
}

/** The entry as the core sees it (`tokenEncoding` only for the encodings the counter knows, `pinned` only when set). */
export function toEntry(
  row: Pick<EntryRow, 'seq' | 'role' | 'content' | 'tokens' | 'toolCalls' | 'toolCallId' | 'pinned' | 'encoding'>,
): ContextEntry {
  const entry: ContextEntry = { seq: row.seq, role: row.role, content: row.content, tokens: row.tokens };
  if (row.encoding === 'o200k_base' || row.encoding === 'cl100k_base') entry.tokenEncoding = row.encoding;
  if (Array.isArray(row.toolCalls)) entry.toolCalls = copy(row.toolCalls);
  if (row.toolCallId) entry.toolCallId = row.toolCallId;
  if (row.pinned) entry.pinned = true;
  return entry;
}

/** Hands out the thread's next seq (gapless, like the row update in Postgres) and marks the activity. */
export function nextSeq(thread: ThreadRow): number {
  thread.lastSeq += 1;
  thread.lastActivityAt = new Date();
  thread.updatedAt = new Date();
  return thread.lastSeq;
}

export const byId = <T extends { id: string }>(rows: T[], id: string): T | undefined =>
  rows.find((row) => row.id === id);
