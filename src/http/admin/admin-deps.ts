import type { Queue } from 'bullmq';
import type {
  AdminThreadStore,
  AuditStore,
  CostReport,
  FoldLagPolicy,
  FoldQueue,
  ModelCallHistory,
  QueueRegistry,
  RebuildQueue,
  SummaryStore,
} from '../../core/ports';
import type { ModelPrices } from '../../core/costs/estimate-costs';
import type { AdminToolListDto, TokenEstimateDto } from '../../shared/admin-api';
import type { AdminAuth } from './admin-auth';
import type { SpendLimitAdminStore } from '../../core/ports/spend-store';
import type { SpendLimit } from '../../core/spend/spend-limit';

/** What the admin routes are given by the composition root (part of HttpDeps). */
export interface AdminHttpDeps {
  auth: AdminAuth;
  threads: AdminThreadStore;
  summaries: SummaryStore;
  audit: AuditStore;
  jobs: FoldQueue & RebuildQueue;
  /** The queues admins see (BullMQ's: the dashboard adapts them). */
  queues: QueueRegistry<Queue>;
  /** The deployment's fold policy, for the list's `foldLagEntries`. */
  foldLagPolicy: FoldLagPolicy;
  /** Per-call token records for the admin chart. */
  modelCalls: ModelCallHistory;
  /** Model-call usage grouped by day, user or thread, and MODEL_PRICES, for GET /api/admin/costs. */
  costs: {
    report: CostReport;
    prices: ModelPrices;
    /** SPEND_LIMIT_TIMEZONE: the days of the costs by day. */ timeZone?: string;
    /** A user's effective spend limit as settings write it (null: none); absent when limits are not enforced. */
    limitOf?: (userId: string) => Promise<string | null>;
  };
  /** The chat model's estimate correction (GET /api/admin/token-estimate). */
  tokenEstimate: () => TokenEstimateDto;
  /** Every tool with its source, mode and its MCP server's state (GET /api/admin/tools). */
  tools: () => AdminToolListDto;
  /** Spend limits on users and groups (GET/PUT/DELETE /api/admin/spend-limits); absent: those routes answer 404. */
  spendLimits?: SpendLimitAdminDeps;
}

/** What the spend-limit admin routes are given (AdminHttpDeps.spendLimits). */
export interface SpendLimitAdminDeps {
  store: SpendLimitAdminStore;
  /** SPEND_LIMITS: off, a PUT answers CONFLICT (nothing would enforce it). */
  enforced: boolean;
  timeZone: string;
  prices: ModelPrices;
  /** The chat and summarizer models: a money limit needs a price for each. */
  models: string[];
  defaults: { user: SpendLimit | null; guest: SpendLimit | null; guestsPerAddress: SpendLimit | null };
  /** The ids of the configured service keys (OPENAI_FACADE_KEYS, see serviceKeyId): those a limit may be set on. */
  serviceKeyIds: string[];
}
