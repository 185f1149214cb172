import type { SpendGate } from '../core/spend-gate/spend-gate';
import type { ContextSettings } from '../core/thread-context/context-settings';
import type { RateLimiter } from '../core/limits/rate-limiter';
import type { EditDeps } from '../core/fork';
import type { MemoryDeps } from '../core/memory';
import type { SavedMemoryDeps } from '../core/saved-memories';
import type {
  ErasureStore,
  ExportReader,
  LogPort,
  MessageContextReader,
  ThreadEventBus,
  ThreadStore,
  ToolQueue,
  ToolRunStore,
  TranscriptSearch,
  TranscriptStore,
  TurnStore,
} from '../core/ports';
import type { AsyncToolDeps } from '../core/tools/run-async-tool';
import type { TurnRunner } from '../core/turn/turn-runner';
import type { ServerInfoDto } from '../shared/api';
import type { AdminHttpDeps } from './admin/admin-deps';
import type { TokenService } from '../auth/token-service';
import type { ClaimGroupSync } from '../auth/principal-from-token';
import type { HealthProbes } from './health-routes';
import type { FacadeHttpDeps } from './openai-facade/facade-deps';
import type { OpenAIFunctionTool } from '../core/context/types';

/** What the HTTP adapter is given by the composition root. */
/** What the runners' callback routes need (null when no external tools are configured). */
export interface ToolCallbackDeps {
  /** The signing secret of the runner of tool `name` (its own `secret`, else TOOL_WEBHOOK_SECRET); null: no runner. */
  secretFor(name: string): string | null;
  /** PUBLIC_BASE_URL's path without a trailing slash ('' at the root): runners sign the path they post to. */
  basePath: string;
  /** Remembers a signature for the tolerance window; false when it was already seen (a replay). */
  remember(signature: string): Promise<boolean>;
  /** Forgets a remembered signature (its report was refused: the runner may send it again). */
  forget(signature: string): Promise<void>;
  deps: AsyncToolDeps;
}

export interface HttpDeps {
  log: LogPort;
  tokens: TokenService;
  threads: ThreadStore;
  transcript: TranscriptStore;
  /** Full-text search of transcripts (the search routes). */
  search: TranscriptSearch;
  turns: TurnStore;
  runner: TurnRunner;
  /**
   * Stop: cancels the thread's turn in this process, else, when a turn of the thread runs in another process,
   * asks every process through Redis (true then). Default: this process only (`runner.cancel`).
   */
  cancelTurn?: (threadId: string, turnId?: string) => Promise<boolean>;
  /** Titles a thread after its first exchange (as the runner asks it; a job, or the first message's words). */
  requestTitle?: (threadId: string) => Promise<unknown>;
  events: ThreadEventBus;
  settings: ContextSettings;
  /** RATE_LIMIT_PER_MINUTE: model-spending requests (sends, retries, regenerations, rebuilding forgets) per user. */
  sendLimiter: RateLimiter;
  /** Spend limits (SPEND_LIMITS=on): sends hold their worst case, /api/me/usage reads them; absent: none. */
  spend?: SpendGate;
  /** SEARCH_PER_MINUTE: searches of the search routes per user (not a model spend: a budget of its own). */
  searchLimiter: RateLimiter;
  /** EXPORTS_PER_MINUTE: thread and account exports and erasures, per user. */
  exportLimiter: RateLimiter;
  /** Every /api request of a user (API_REQUESTS_PER_MINUTE, per process); absent: no such limit. */
  requestLimiter?: RateLimiter;
  /** Per client address (IPv6 by /64), shared by every process through Redis. */
  rateLimits: { guests: RateLimiter; adminSignIn: RateLimiter; authFailures: RateLimiter };
  /** CORS_CREDENTIALS. */
  corsCredentials: boolean;
  /** TRUST_PROXY as express' `trust proxy` setting. */
  trustProxy: boolean | number | string[];
  probes: HealthProbes;
  info: ServerInfoDto;
  /** MAX_MESSAGE_CHARS, MAX_QUEUED_TURNS, TURN_TIMEOUT_MS, MAX_THREADS_PER_USER. */
  limits: { maxMessageChars: number; maxQueuedTurns: number; turnTimeoutMs: number; maxThreadsPerUser: number };
  corsOrigins: string[];
  allowGuests: boolean;
  toolRuns: ToolRunStore;
  /** The tools offered on every chat call (their schemas take part of the budget). */
  /** The tool schemas offered on the next chat call (configured tools change at run time). */
  toolDefinitions: () => OpenAIFunctionTool[];
  toolQueue: ToolQueue;
  /** External runners' signed callbacks (absent or null: none configured). */
  toolCallbacks?: ToolCallbackDeps | null;
  admin: AdminHttpDeps;
  /** What the model was given for each answer (its call's manifest). */
  messageContext: MessageContextReader;
  /** Memory controls: pins, settings, fresh context, forget, regenerate, export. */
  memory: MemoryDeps & { exportReader: ExportReader };
  /** Forks and edits (which fork). */
  fork: EditDeps;
  /** The user's saved memories (GET/POST/PATCH/DELETE /api/memory). */
  savedMemories: SavedMemoryDeps;
  /** Tombstones of erased users (their older tokens are refused). */
  erasures: Pick<ErasureStore, 'erasureOf'>;
  /** SPEND_LIMIT_GROUP_CLAIM (with spend limits on): a host-minted token's groups become its user's memberships. */
  claimGroups?: ClaimGroupSync;
  /**
   * Deletes a thread (DELETE /api/threads/:id): stops its turns and remote tool work, keeps its call records, removes
   * its jobs (core/erasure deleteThread).
   */
  deleteThread(threadId: string): Promise<void>;
  /** Erases a user whole (DELETE /api/me, DELETE /api/admin/users/:userId). */
  eraseUser(input: { userId: string; kind: 'guest' | 'external' }): Promise<{ existed: boolean; threads: number }>;
  /** The OpenAI-compatible routes (/v1); absent: not mounted. */
  facade?: FacadeHttpDeps;
}
