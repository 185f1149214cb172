import type { SpendGate } from '../spend-gate/spend-gate';
import type { ContextSettings } from '../thread-context/context-settings';
import type { RateLimiter } from '../limits/rate-limiter';
import type { ForkStore, LogPort, MemoryControlsStore, ThreadStore, TranscriptStore, TurnStore } from '../ports';

/**
 * The limits a fork and an edit go through, one call each (wired in src/app/compose.ts): a fork counts as a new
 * thread of its owner; an edit also sends a message.
 */
export interface ForkGuards {
  /** Throws (RATE_LIMITED, CONFLICT, ...) when the user may not get another thread now. */
  beforeNewThread(userId: string): Promise<void>;
}

/** What forks and edits need; wired once in src/app/compose.ts. */
export interface ForkDeps {
  threads: Pick<ThreadStore, 'findThread'>;
  transcript: Pick<TranscriptStore, 'findMessage'>;
  memory: Pick<MemoryControlsStore, 'listMessagesBySeq'>;
  forks: ForkStore;
  guards: ForkGuards;
  /** MAX_THREADS_PER_USER: a fork counts as a thread of its owner. */
  maxThreadsPerUser: number;
  /** FORKS_PER_MINUTE: forks per user per minute (an edit spends the send limit instead). */
  forkLimiter: RateLimiter;
  /** FORK_MAX_MESSAGES: the furthest fork point (seq) a fork or an edit may copy through. Default 2,000. */
  maxForkMessages: number;
  log: LogPort;
}

/** An edit also stores the new text as the fork's next turn: the send's checks and queue. */
export interface EditDeps extends ForkDeps {
  turns: Pick<TurnStore, 'acceptUserMessage'>;
  settings: ContextSettings;
  /** Model-spending requests per user per minute (RATE_LIMIT_PER_MINUTE), shared with sends. */
  sendLimiter: RateLimiter;
  maxMessageChars: number;
  maxQueuedTurns: number;
  /** Spend limits (SPEND_LIMITS=on): an edit holds its worst case like a send. */
  spend?: SpendGate;
}
