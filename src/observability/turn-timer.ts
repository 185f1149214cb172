import type { ThreadEventBus } from '../core/ports';
import type { Metrics } from './metrics';

/** Turns timed at once, by default: far more than one process runs at a time. */
export const TIMED_TURNS_MAX = 10_000;

/**
 * Times the turns run by this process: start (the turn store hands the turn out), first token (its answer's
 * `message-start` while streaming) and end (the turn store records its status). Feeds the turn latency and
 * time-to-first-token histograms without a hook inside the turn runner.
 *
 * Bounded: a turn whose end this process never records (storing its end failed, another process finished it after
 * the lease moved, the sweeper marked it interrupted) would otherwise stay here for the life of the process. Past
 * `maxTurns` (default {@link TIMED_TURNS_MAX}) the oldest start is forgotten; its end, if it comes, is not timed.
 */
export class TurnTimer {
  private readonly started = new Map<string, { at: number; firstToken: boolean }>();
  private readonly maxTurns: number;
  private readonly now: () => number;

  /** `now` in milliseconds (default `performance.now`). */
  constructor(
    private readonly metrics: Metrics,
    options: { now?: () => number; maxTurns?: number } = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.maxTurns = options.maxTurns ?? TIMED_TURNS_MAX;
  }

  /** Turns started and not ended yet (diagnostics and tests). */
  get timedTurns(): number {
    return this.started.size;
  }

  /** Listens to the bus for first tokens; returns the unsubscribe. */
  watch(events: ThreadEventBus): () => void {
    return events.subscribeAll((event) => {
      if (event.type === 'message-start' && event.message.status === 'streaming' && event.message.turnId)
        this.firstToken(event.message.turnId);
    });
  }

  turnStarted(turnId: string): void {
    this.started.delete(turnId);
    this.started.set(turnId, { at: this.now(), firstToken: false });
    // Insertion order is start order: the first key is the oldest start.
    while (this.started.size > this.maxTurns) this.started.delete(this.started.keys().next().value as string);
  }

  firstToken(turnId: string): void {
    const turn = this.started.get(turnId);
    if (!turn || turn.firstToken) return;
    turn.firstToken = true;
    this.metrics.timeToFirstToken.observe((this.now() - turn.at) / 1000);
  }

  turnEnded(turnId: string, status: string): void {
    const turn = this.started.get(turnId);
    if (!turn) return;
    this.started.delete(turnId);
    this.metrics.turnDuration.observe({ status }, (this.now() - turn.at) / 1000);
  }
}
