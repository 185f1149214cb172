import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics';
import { TurnTimer } from './turn-timer';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

async function turnsTimed(metrics: ReturnType<typeof createMetrics>): Promise<number> {
  const metric = await metrics.turnDuration.get();
  return metric.values
    .filter((value) => value.metricName === 'chat_turn_duration_seconds_count')
    .reduce((sum, value) => sum + value.value, 0);
}

describe('TurnTimer', () => {
  it('times a turn from its start to its end', async () => {
    const metrics = createMetrics({ log: silent, defaultMetrics: false });
    let now = 1000;
    const timer = new TurnTimer(metrics, { now: () => now });
    timer.turnStarted('t1');
    now += 2500;
    timer.turnEnded('t1', 'complete');
    const metric = await metrics.turnDuration.get();
    expect(metric.values.find((value) => value.metricName === 'chat_turn_duration_seconds_sum')?.value).toBe(2.5);
    expect(timer.timedTurns).toBe(0);
  });

  it('keeps at most maxTurns starts: turns whose end never comes do not pile up', async () => {
    const metrics = createMetrics({ log: silent, defaultMetrics: false });
    const timer = new TurnTimer(metrics, { maxTurns: 100 });
    // Turns this process started but never saw end (storing the end failed, another process finished them).
    for (let index = 0; index < 1000; index += 1) timer.turnStarted(`lost-${index}`);
    expect(timer.timedTurns).toBe(100);
    // The newest starts are the ones kept: their ends are still timed, the oldest ones' are not.
    timer.turnEnded('lost-999', 'complete');
    timer.turnEnded('lost-0', 'complete');
    expect(await turnsTimed(metrics)).toBe(1);
    expect(timer.timedTurns).toBe(99);
  });

  it('bounds the default at 10,000 turns', () => {
    const timer = new TurnTimer(createMetrics({ log: silent, defaultMetrics: false }));
    for (let index = 0; index < 10_500; index += 1) timer.turnStarted(`turn-${index}`);
    expect(timer.timedTurns).toBe(10_000);
  });
});
