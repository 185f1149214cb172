import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CoalescedRefresh } from './coalesced-refresh';

/** A refresh whose runs are counted and finish when the test says so. */
function countedRefresh(options: { active?: () => boolean } = {}) {
  const finishers: (() => void)[] = [];
  const refresh = new CoalescedRefresh({
    delayMs: 500,
    active: options.active ?? (() => true),
    run: () =>
      new Promise<void>((resolve) => {
        finishers.push(resolve);
      }),
  });
  return {
    refresh,
    runs: () => finishers.length,
    finish: async (index: number) => {
      finishers[index]?.();
      await vi.advanceTimersByTimeAsync(0);
    },
  };
}

describe('CoalescedRefresh (MCP tools-changed notifications)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs once for a burst of requests, after the delay', async () => {
    const { refresh, runs } = countedRefresh();
    for (let index = 0; index < 50; index += 1) refresh.request();
    await vi.advanceTimersByTimeAsync(499);
    expect(runs()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs()).toBe(1);
  });

  it('never runs twice at once: requests during a run ask for exactly one more, after it', async () => {
    const { refresh, runs, finish } = countedRefresh();
    refresh.request();
    await vi.advanceTimersByTimeAsync(500);
    for (let index = 0; index < 20; index += 1) refresh.request();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs()).toBe(1);
    await finish(0);
    await vi.advanceTimersByTimeAsync(500);
    expect(runs()).toBe(2);
    await finish(1);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs()).toBe(2);
  });

  it('drops the extra run when the connection it served is gone, and runs nothing once stopped', async () => {
    let active = true;
    const { refresh, runs, finish } = countedRefresh({ active: () => active });
    refresh.request();
    await vi.advanceTimersByTimeAsync(500);
    refresh.request();
    active = false;
    await finish(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs()).toBe(1);

    const stopped = countedRefresh();
    stopped.refresh.request();
    stopped.refresh.stop();
    stopped.refresh.request();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(stopped.runs()).toBe(0);
  });
});
