import { describe, expect, it } from 'vitest';
import type { FoldQueue, SummaryStore, TurnStore } from '../core/ports';
import { silentLog, testSettings } from '../../test/fakes/summary-use-case-fakes';
import { createSweeper } from './sweeper';

describe('sweeper.stop', () => {
  it('resolves only after the sweep in flight has finished (the database closes after it)', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const steps: string[] = [];
    const summaries = {
      async threadsNeedingFold() {
        steps.push('query started');
        await gate;
        steps.push('query answered');
        return ['thread-1'];
      },
    } as unknown as SummaryStore;
    const folds = {
      async enqueueFold() {
        steps.push('fold enqueued');
        return 'job';
      },
    } as unknown as FoldQueue;
    const sweeper = createSweeper({
      turns: {} as TurnStore,
      summaries,
      folds,
      settings: testSettings(),
      log: silentLog,
      intervalMs: 60_000,
    });

    sweeper.start();
    await Promise.resolve();
    expect(steps).toEqual(['query started']);
    let stopped = false;
    const stopping = sweeper.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);

    release();
    await stopping;
    steps.push('database closed');
    expect(steps).toEqual(['query started', 'query answered', 'fold enqueued', 'database closed']);
  });

  it('resolves at once when no sweep runs', async () => {
    const sweeper = createSweeper({
      turns: {} as TurnStore,
      summaries: {} as SummaryStore,
      folds: {} as FoldQueue,
      settings: testSettings(),
      log: silentLog,
    });
    await expect(sweeper.stop()).resolves.toBeUndefined();
  });
});
