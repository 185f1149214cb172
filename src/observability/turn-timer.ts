import type { ThreadEventBus } from '../core/ports';
import type { Metrics } from './metrics';

/**
 * Times the turns run by this process: start (the turn store hands the turn out), first token (its answer's
 * `message-start` while streaming) and end (the turn store records its status). Feeds the turn latency and
 * time-to-first-token histograms without a hook inside the turn runner.
 */
export class TurnTimer {
  private readonly started = new Map<string, { at: number; firstToken: boolean }>();

  constructor(private readonly metrics: Metrics, private readonly now: () => number = () => performance.now()) {}

  /** Listens to the bus for first tokens; returns the unsubscribe. */
  watch(events: ThreadEventBus): () => void {
    return events.subscribeAll((event) => {
      if (event.type === 'message-start' && event.message.status === 'streaming' && event.message.turnId) this.firstToken(event.message.turnId);
    });
  }

  turnStarted(turnId: string): void {
    this.started.set(turnId, { at: this.now(), firstToken: false });
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
