import type { ContextPackDto, ForkSummaryDto, ThreadDto } from './api';

/** DTOs of the admin API (`/api/admin/*`), shared with the browser's admin pages. Dates are ISO strings. */

export type SummaryAuthorDto = 'fold' | 'overflow-fallback' | 'rebuild' | 'admin';
export type AdminThreadSortDto = 'activity' | 'summary' | 'lag' | 'errors';

export interface AdminThreadDto {
  id: string;
  title: string;
  owner: { id: string; kind: 'guest' | 'external' };
  createdAt: string;
  lastActivityAt: string;
  memoryMode: 'summary' | 'window-only';
  messageCount: number;
  summary: { preview: string; tokens: number; revision: number; coveredThroughSeq: number };
  windowEntries: number;
  windowTokens: number;
  /**
   * Window entries waiting to be folded: while the deployment's trigger fires, the window entries older than what
   * the keep policy keeps (exchange-block boundaries ignored); 0 while the trigger does not fire.
   */
  foldLagEntries: number;
  lastFoldAt: string | null;
  lastFoldError: string | null;
}

export interface AdminThreadPageDto {
  threads: AdminThreadDto[];
  nextCursor: string | null;
}

/** One summary revision without its text (lists). */
export interface SummaryRevisionInfoDto {
  revision: number;
  author: SummaryAuthorDto;
  /** The admin's id for `admin` and `rebuild` revisions (a JWT's sub, or `admin-token`). */
  authorId: string | null;
  tokens: number;
  fromSeq: number;
  throughSeq: number;
  model: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  durationMs: number | null;
  identifiersKept: number | null;
  identifiersTotal: number | null;
  /** How many segments the text has: a fold appends one; a consolidation, rebuild or admin edit leaves one. */
  segments: number;
  redacted: boolean;
  createdAt: string;
}

export interface LineDiffOpDto {
  op: 'equal' | 'add' | 'remove';
  text: string;
}

export interface SummaryRevisionDto extends SummaryRevisionInfoDto {
  /** Empty when redacted. */
  text: string;
  /** Line diff against the previous revision's text (against nothing for the first revision). */
  diff: LineDiffOpDto[];
  diffStats: { added: number; removed: number };
}

export interface SummaryRevisionListDto {
  revisions: SummaryRevisionDto[];
  /** True when older revisions were left out (see the `limit` query parameter). */
  hasMoreBefore: boolean;
}

export interface AdminThreadDetailDto {
  thread: ThreadDto & { ownerId: string };
  context: {
    summaryText: string;
    summaryTokens: number;
    revision: number;
    coveredThroughSeq: number;
    contextStartSeq: number;
    memoryMode: 'summary' | 'window-only';
    version: number;
    windowEntries: number;
    windowTokens: number;
    pinnedEntries: number;
    foldPending: boolean;
    /** Which trigger conditions fire, e.g. `messages=4: 6 >= 4`. */
    foldReasons: string[];
    lastFoldAt: string | null;
    lastFoldError: string | null;
    settings: { trigger?: string; keep?: string; summaryPrompt?: string };
  };
  /** Exactly what the next model call would get, entry by entry. */
  pack: ContextPackDto;
  transcript: { messages: number; tokens: number; characters: number; lastSeq: number };
  revisions: SummaryRevisionInfoDto[];
  /** Fork lineage: the thread this one was branched from (null when it was not, or that thread is gone), and its own forks. */
  lineage: { parent: { threadId: string; title: string; seq: number } | null; forks: ForkSummaryDto[] };
}

export interface SummaryJobAcceptedDto {
  jobId: string | null;
}

export interface SummaryCorrectedDto {
  revision: number;
  tokens: number;
  fromSeq: number;
  throughSeq: number;
}

export interface QueueCountsDto {
  name: string;
  waiting: number;
  active: number;
  failed: number;
  delayed: number;
  completed: number;
}

export interface QueueListDto {
  queues: QueueCountsDto[];
}

export interface AuditEntryDto {
  id: string;
  actor: string;
  action: string;
  threadId: string | null;
  details: Record<string, unknown>;
  createdAt: string;
}

export interface AuditPageDto {
  entries: AuditEntryDto[];
  nextCursor: string | null;
}

export interface AdminSessionDto {
  actor: string;
  expiresAt: string;
}

/** The chat model's prompt-token estimate against the provider's counts (`GET /api/admin/token-estimate`). */
export interface TokenEstimateDto {
  model: string;
  /** Multiplier applied to our estimates by the budget guard and the trigger (>= 1, at most maxFactor). */
  factor: number;
  maxFactor: number;
  /** Provider-reported ÷ estimated prompt tokens, a weighted mean over recent chat calls; null before any report. */
  observedRatio: number | null;
  /** Chat calls with a usage report taken into account (since this process started, seeded from the stored calls). */
  samples: number;
}

/** One tool as admins see it (`GET /api/admin/tools`). */
export interface AdminToolDto {
  name: string;
  description: string;
  source: 'built-in' | 'mcp' | 'external';
  /** The MCP server and its own name for the tool. */
  server: string | null;
  serverTool: string | null;
  /** An external runner's URL. */
  url: string | null;
  mode: 'inline' | 'async' | 'external';
  /** Submitted and polled (MCP task over Streamable HTTP, external runner): no worker slot held while it works. */
  background: boolean;
  /** False when its schema is past TOOL_SCHEMA_MAX_TOKENS. */
  offered: boolean;
  schemaTokens: number;
  /** The MCP server's state (`ready`, `restarting`, ...); null for other tools. */
  serverState: string | null;
}

export interface AdminMcpServerDto {
  name: string;
  transport: 'stdio' | 'http';
  state: string;
  tools: number;
  restarts: number;
  lastError: string | null;
  supportsTasks: boolean;
}

export interface AdminToolListDto {
  tools: AdminToolDto[];
  servers: AdminMcpServerDto[];
}

/** One group of the estimated costs (a UTC day, a user, a thread). */
export interface CostRowDto {
  /**
   * The day, user id or thread id; '' for the calls of deleted threads (and of no thread: a /v1 client's titles and
   * tags), labelled "(deleted thread)", or per user for anonymised calls (erasure, RETENTION_DAYS), "(erased user)".
   */
  key: string;
  label: string;
  calls: number;
  promptTokens: number;
  /** Prompt tokens the provider reported as read from its cache (0 where none were reported). */
  cachedTokens: number;
  /** Prompt tokens the provider reported as written to its cache (Claude; priced at `cacheWrite`); 0 where none. */
  cacheWriteTokens: number;
  completionTokens: number;
  /** Estimated cost of the calls of priced models (MODEL_PRICES); null when none of the group's models has a price. */
  cost: number | null;
  /** Calls counted from our token estimate because the provider reported no usage: their cost is our estimate. */
  estimatedCalls: number;
  unpricedModels: string[];
  /**
   * Cached ÷ prompt tokens of the group's calls whose provider reported both its prompt and its cached tokens (calls
   * without a usage report, or without cached tokens in it, are left out of both); null when no call reported them.
   */
  cachedShare: number | null;
  /**
   * Per user, when spend limits are enforced: the user's effective limit as settings write it (their own, else their
   * groups', else the default of their kind), null when none applies. Absent otherwise.
   */
  limit?: string | null;
}

/** The whole period's figures (every call since `since`, not only the groups listed), with the rows' rules. */
export type CostTotalDto = Omit<CostRowDto, 'key' | 'label' | 'limit'>;

/** GET /api/admin/costs. */
export interface CostReportDto {
  by: 'day' | 'user' | 'thread';
  /** The calls counted were made since then. */
  since: string;
  /** Models MODEL_PRICES prices (no price is built in). */
  pricedModels: string[];
  rows: CostRowDto[];
  total: CostTotalDto;
}

/** A spend limit as settings write it: `0.5/day`, `200000tokens/month`. */
export type SpendLimitText = string;

/** `GET /api/admin/spend-limits`: the defaults and every limit admins set. */
export interface SpendLimitsDto {
  /** SPEND_LIMITS: off enforces nothing (PUT answers CONFLICT). */
  enforced: boolean;
  timeZone: string;
  defaults: { user: SpendLimitText | null; guest: SpendLimitText | null; guestsPerAddress: SpendLimitText | null };
  users: { userId: string; limit: SpendLimitText; updatedAt: string }[];
  groups: { name: string; limit: SpendLimitText | null; members: string[]; updatedAt: string | null }[];
  /**
   * The configured service keys by id (the short hash their end users' ids carry, `svc-<keyId>:…`) and any key with a
   * limit: a key's limit covers all its end users together. `configured: false`: a limit left on a removed key.
   */
  serviceKeys: { keyId: string; configured: boolean; limit: SpendLimitText | null; updatedAt: string | null }[];
}
