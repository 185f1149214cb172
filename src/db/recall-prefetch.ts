import type { RecalledMessage } from '../core/context/types';

/**
 * Cross-thread recall read ahead (issue 37). Across a user's chats, the other chats' ranking is most of a context
 * read (~6 ms of a 15 ms path to the model at one turn in flight, bench/README.md "Ninth pass"), and its query is the
 * user's message, known when the message is accepted. So the turn path starts that read beside the accept, and the
 * turn's start reads the rest of the context while it finishes: the ranking overlaps two statements instead of
 * following them. The ranking's work is the same (one statement more, counted in the work budget); the wait is
 * shorter.
 *
 * A read ahead stands for the turn's own read only where it finds what that read would:
 * - for the turn of that very message (its id), started in this process;
 * - when no other turn of the thread was queued or running at the accept (the message runs at once; a message that
 *   waits for an earlier answer gets its own read when it starts, and its read ahead, started before the accept
 *   could tell, was work for nothing: one ranking per message sent while an answer streams);
 * - read as of the accept: what it found is used as is within FRESH_MS of it (a forget or a chat's deletion that
 *   lands in that time is as concurrent with the send as one that lands while the answer streams); later (a server
 *   too busy to start the turn at once) the messages it found are checked again, which is a few index lookups, not
 *   a second ranking (`Taken.fresh`).
 * Anything else, and a read that failed, leaves the turn to read the other chats itself, as before.
 */
export interface RecallPrefetch {
  /**
   * Starts `read` for a message about to be accepted on `threadId`; the returned function must be called with the
   * accept's outcome (null: not accepted, and the read is dropped).
   */
  start(
    threadId: string,
    read: () => Promise<RecalledMessage[] | null>,
  ): (accepted: { messageId: string; activeBefore: number } | null) => void;
  /** Reads ahead still running (at most PREFETCH_IN_FLIGHT: past it, start reads nothing). */
  readonly running: number;
  /**
   * The read started for `messageId` on `threadId`, removing it; undefined when there is none. It resolves to
   * undefined where it may not stand for the turn's own read (another message's, one that waited, a failed read).
   */
  take(threadId: string, messageId: string): Promise<Taken | undefined> | undefined;
  /** Reads kept, for tests. */
  readonly size: number;
}

export interface Taken {
  recalled: RecalledMessage[] | null;
  /** False: read more than FRESH_MS before the turn started; the messages found must be checked again. */
  fresh: boolean;
}

/** How long a read ahead stands for the turn's own read without its messages being checked again. */
export const FRESH_MS = 1000;
/** Reads kept at most (a turn takes its read within milliseconds unless it never starts here; this guards the map). */
export const PREFETCH_MAX = 1000;
/**
 * Reads ahead running at once, at most. Overlapping the ranking with the accept shortens the wait only while a core is
 * idle: on a busy server every core already has work, and the read ahead is one statement more for the same
 * ranking (the throughput run served ~13% fewer turns with a read ahead for every turn: bench/README.md, "Ninth
 * pass"). Past this many, a message's turn reads the other chats itself, as before.
 */
export const PREFETCH_IN_FLIGHT = 2;
/** A read not taken after this long is dropped (its turn started elsewhere, or never). */
const KEEP_MS = 60_000;

interface Ahead {
  startedAt: number;
  accepted: Promise<{ messageId: string; activeBefore: number } | null>;
  result: Promise<RecalledMessage[] | null | undefined>;
}

export function createRecallPrefetch(now: () => number = Date.now): RecallPrefetch {
  // By thread, kept from the start of the read: the turn may be started (by a runner still holding the thread's
  // lease) before the accept's own continuation has run, so its outcome is awaited, not assumed.
  const kept = new Map<string, Ahead>();
  let running = 0;
  const dropOld = (): void => {
    const cut = now() - KEEP_MS;
    // Insertion order is start order: the oldest are first.
    for (const [threadId, ahead] of kept) {
      if (ahead.startedAt >= cut && kept.size < PREFETCH_MAX) break;
      kept.delete(threadId);
    }
  };
  return {
    start(threadId, read) {
      if (running >= PREFETCH_IN_FLIGHT) return () => undefined;
      running += 1;
      let settle: (accepted: { messageId: string; activeBefore: number } | null) => void = () => undefined;
      const ahead: Ahead = {
        startedAt: now(),
        accepted: new Promise((resolve) => (settle = resolve)),
        // Never rejects: a failed read is undefined, and the turn reads for itself (that read's failure, if the
        // cause lasts, is the turn's error, logged and reported where every failed context read is).
        result: read()
          // eslint-disable-next-line no-restricted-syntax -- not swallowed: the turn's own read runs instead (above)
          .catch(() => undefined)
          .finally(() => (running -= 1)),
      };
      dropOld();
      kept.delete(threadId);
      kept.set(threadId, ahead);
      return (accepted) => {
        settle(accepted);
        if ((!accepted || accepted.activeBefore > 0) && kept.get(threadId) === ahead) kept.delete(threadId);
      };
    },
    take(threadId, messageId) {
      const ahead = kept.get(threadId);
      if (!ahead) return undefined;
      kept.delete(threadId);
      return ahead.accepted.then(async (accepted) => {
        if (!accepted || accepted.messageId !== messageId || accepted.activeBefore > 0) return undefined;
        const recalled = await ahead.result;
        if (recalled === undefined) return undefined;
        return { recalled, fresh: now() - ahead.startedAt <= FRESH_MS };
      });
    },
    get size() {
      return kept.size;
    },
    get running() {
      return running;
    },
  };
}
