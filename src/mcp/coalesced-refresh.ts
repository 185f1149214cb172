/**
 * Runs `run` once per burst of requests: the first request waits `delayMs` (more requests meanwhile join it), never
 * two runs at once, and a request during a run asks for exactly one more run after it, while `active()` holds.
 * Used for an MCP server's tools-changed notifications, which a server may send in bursts.
 */
export class CoalescedRefresh {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly options: { run: () => Promise<void>; delayMs: number; active: () => boolean }) {}

  /** Asks for a run (joined with the others of its burst). */
  request(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.options.run().finally(() => {
        this.running = null;
        if (this.again && !this.stopped && this.options.active()) {
          this.again = false;
          this.request();
        }
      });
    }, this.options.delayMs);
    this.timer.unref();
  }

  /** No more runs: a waiting one is dropped (a running one finishes). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
