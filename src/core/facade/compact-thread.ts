import type { Thread } from '../domain/types';
import { AppError } from '../errors/app-error';
import type { RateLimiter } from '../limits/rate-limiter';
import type { ThreadStore } from '../ports';
import type { SpendGate } from '../spend-gate/spend-gate';
import type { FoldOutcome } from '../summary/fold-thread';
import { spendOrRefuse } from '../turn/spend-or-refuse';

export interface CompactThreadDeps {
  threads: Pick<ThreadStore, 'findThread'>;
  /**
   * A forced fold of the thread through the normal fold path (foldThread: the summary committed with compare-and-set,
   * so a fold job running at the same time is re-planned, never doubled), stopped by `signal`.
   */
  foldNow: (threadId: string, signal: AbortSignal) => Promise<FoldOutcome>;
  /** How long a compaction's fold may take (TURN_TIMEOUT_MS). */
  timeoutMs: number;
}

/** What a compaction left: the thread as it now stands and the summarizer's tokens it took. */
export interface Compacted {
  thread: Thread;
  /** The thread's summary revision after the fold (0: nothing folded yet, the window holds it all). */
  revision: number;
  /** The thread's last seq: what the compaction stands for goes through it. */
  atSeq: number;
  usage: { tokensIn: number; tokensOut: number };
}

/**
 * Spends what a compaction costs before anything is read: the send limit (RATE_LIMIT_PER_MINUTE), as a turn does,
 * and, with spend limits on, a send's hold (SPEND_LIMIT_REACHED when it does not fit). The hold is given back by
 * the caller once the fold is done; the fold's own calls are counted as every fold's are.
 */
export async function spendForCompaction(
  userId: string,
  deps: { sendLimiter: RateLimiter; spend?: SpendGate | undefined },
): Promise<{ release: () => Promise<void> }> {
  await spendOrRefuse(deps.sendLimiter, userId);
  const holdId = deps.spend ? await deps.spend.hold({ userId }) : null;
  return {
    release: async () => {
      if (holdId) await deps.spend?.releaseHold(holdId);
    },
  };
}

/**
 * Compacts a conversation now: a forced fold of its thread (what falls outside the keep policy goes into the summary;
 * nothing when the window already fits it), bounded by `timeoutMs`, then the thread as it stands. The summary is
 * written exactly as a background fold writes it. PROVIDER_TIMEOUT when the fold did not finish in time (the summary
 * stays as it was).
 */
export async function compactThread(
  input: { userId: string; threadId: string },
  deps: CompactThreadDeps,
): Promise<Compacted> {
  const signal = AbortSignal.timeout(deps.timeoutMs);
  let outcome: FoldOutcome;
  try {
    outcome = await deps.foldNow(input.threadId, signal);
  } catch (error) {
    if (signal.aborted)
      throw new AppError('PROVIDER_TIMEOUT', `The compaction did not finish within ${deps.timeoutMs} ms.`, {
        cause: error,
      });
    throw error;
  }
  const thread = await deps.threads.findThread(input.threadId, input.userId);
  if (!thread) throw new AppError('NOT_FOUND', 'The conversation is gone.');
  return {
    thread,
    revision: thread.summary?.revision ?? 0,
    atSeq: thread.lastSeq,
    usage: outcome.status === 'folded' ? outcome.usage : { tokensIn: 0, tokensOut: 0 },
  };
}
