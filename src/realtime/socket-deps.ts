import type { ErasureStore } from '../core/ports';
import type { ContextSettings } from '../core/thread-context/context-settings';
import type { EditDeps } from '../core/fork';
import type { RateLimiter } from '../core/limits/rate-limiter';
import type { LogPort, ThreadEventBus, ThreadStore, TranscriptStore, TurnStore } from '../core/ports';
import type { TurnRunner } from '../core/turn/turn-runner';
import type { TokenService } from '../auth/token-service';
import type { ClaimGroupSync } from '../auth/principal-from-token';
import type { SpendGate } from '../core/spend-gate/spend-gate';

/** What the socket adapter is given by the composition root (the same use cases and stores REST uses). */
export interface SocketDeps {
  log: LogPort;
  tokens: TokenService;
  threads: ThreadStore;
  /** Tombstones of erased users: their old tokens are refused at connect. */
  erasures: Pick<ErasureStore, 'erasureOf'>;
  /** SPEND_LIMIT_GROUP_CLAIM: the token's groups become the user's (HttpDeps.claimGroups). */
  claimGroups?: ClaimGroupSync;
  transcript: TranscriptStore;
  turns: TurnStore;
  runner: Pick<TurnRunner, 'kick' | 'cancel' | 'partialText'>;
  /** Stop across processes (HttpDeps.cancelTurn); default: this process only. */
  cancelTurn?: (threadId: string) => Promise<boolean>;
  events: ThreadEventBus;
  settings: ContextSettings;
  /** The REST send limiter: one budget per user across REST and sockets. */
  sendLimiter: RateLimiter;
  /** Spend limits (SPEND_LIMITS=on): a send holds its worst case before it is stored. */
  spend?: SpendGate;
  /** MAX_MESSAGE_CHARS, MAX_QUEUED_TURNS, SOCKET_EVENTS_PER_MINUTE, MAX_SOCKETS_PER_USER. */
  limits: { maxMessageChars: number; maxQueuedTurns: number; socketEventsPerMinute: number; maxSocketsPerUser: number };
  corsOrigins: string[];
  /** True once the process is shutting down: sends and edits are refused UNAVAILABLE (nothing stored). */
  closing?: () => boolean;
  /** Edits (`message-edit`): the REST use case. */
  fork: EditDeps;
  /**
   * Cancels a tool run of the user (the async tools part provides it). Resolves true when it was cancelled,
   * false when it had already ended; throws AppError NOT_FOUND for an unknown run or another user's.
   * Without it, `tool-cancel` answers NOT_FOUND.
   */
  cancelToolRun?: (runId: string, userId: string) => Promise<boolean>;
}
