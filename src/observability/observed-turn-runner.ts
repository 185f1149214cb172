import { TurnRunner, type TurnRunnerOptions } from '../core/turn/turn-runner';
import type { Lifecycle } from './instrument-ports';
import { runWithLogContext } from './log-context';

/**
 * The turn runner with two outside concerns, so the core runner stays as it is: a drain runs in its own log
 * context (the thread's id; the turn store wrapper adds the running turn's), and once the process is closing
 * a kick starts nothing (the queued turns wait in Postgres for the next process).
 */
export class ObservedTurnRunner extends TurnRunner {
  private readonly lifecycle: Lifecycle;

  constructor(options: TurnRunnerOptions, lifecycle: Lifecycle) {
    super(options);
    this.lifecycle = lifecycle;
  }

  override kick(threadId: string): Promise<void> {
    if (this.lifecycle.closing) return Promise.resolve();
    return runWithLogContext({ threadId }, () => super.kick(threadId), { fresh: true });
  }
}
