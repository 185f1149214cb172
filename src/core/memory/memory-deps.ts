import type { ContextSettings } from '../thread-context/context-settings';
import type { RateLimiter } from '../limits/rate-limiter';
import type {
  FoldQueue,
  ForgetRebuildQueue,
  ForkStore,
  LogPort,
  MemoryControlsStore,
  ThreadEventBus,
  ThreadStore,
  TranscriptStore,
  TurnStore,
} from '../ports';

/** What the memory controls need; wired once in src/app/compose.ts. */
export interface MemoryDeps {
  threads: Pick<ThreadStore, 'findThread'>;
  transcript: Pick<TranscriptStore, 'findMessage' | 'listTurnMessages'>;
  turns: Pick<TurnStore, 'loadContext'>;
  memory: MemoryControlsStore;
  events: ThreadEventBus;
  settings: ContextSettings;
  jobs: FoldQueue & ForgetRebuildQueue;
  /**
   * The send limiter (RATE_LIMIT_PER_MINUTE): a regeneration, and a forget that rebuilds the summary, call the
   * model, so a user's (not an admin's) spend from the same budget as sends.
   */
  sendLimiter: RateLimiter;
  /** PINNED_MAX_TOKENS; default a quarter of the pack budget. */
  pinnedMaxTokens: number;
  log: LogPort;
  /** Forks share their history with their parent: a forget names the copies it did not reach. */
  forks?: Pick<ForkStore, 'listCopies'>;
}

/** Who acts: the thread's owner, or an admin (any thread; admins alone set the summary prompt). */
export interface MemoryActor {
  userId: string;
  admin: boolean;
}
