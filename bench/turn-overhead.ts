import type { Figure } from './support/report';
import { startBenchStack } from './support/bench-stack';
import type { Services } from './support/stack';
import { distribution, round, type Distribution } from './support/stats';
import type { TurnSample } from './support/turn-probe';

export interface OverheadResult {
  inFlight: number;
  pre: Distribution;
  post: Distribution;
  total: Distribution;
}

/**
 * Turn overhead over REST + SSE with an instant model: pre-model (request arriving -> the stub receiving the model
 * request) and post-model (the stub's last byte -> `message-end` at the client), with `inFlight` turns at once,
 * each lane on its own threads (one turn at a time per thread, as a user would).
 */
export async function measureTurnOverhead(
  services: Services,
  options: { inFlight: number; turnsPerLane: number; threadsPerLane: number; warmupPerLane: number },
): Promise<OverheadResult> {
  const stack = await startBenchStack(services);
  try {
    const token = await stack.probe.guest();
    const samples: TurnSample[] = [];
    await Promise.all(
      Array.from({ length: options.inFlight }, async () => {
        const threads: string[] = [];
        for (let index = 0; index < options.threadsPerLane; index += 1) threads.push(await stack.probe.thread(token));
        for (let turn = 0; turn < options.warmupPerLane + options.turnsPerLane; turn += 1) {
          const sample = await stack.probe.turn({ token, threadId: threads[turn % threads.length] ?? '' });
          if (turn >= options.warmupPerLane) samples.push(sample);
        }
      }),
    );
    return {
      inFlight: options.inFlight,
      pre: distribution(samples.map((sample) => sample.pre)),
      post: distribution(samples.map((sample) => sample.post)),
      total: distribution(samples.map((sample) => sample.total)),
    };
  } finally {
    await stack.stop();
  }
}

export function overheadFigures(result: OverheadResult, floor: Distribution): Figure[] {
  const section = `1 turn overhead, ${result.inFlight} in flight`;
  return [
    { section, name: 'pre-model p50', value: round(result.pre.p50), unit: 'ms', target: { op: '<=', value: 6 } },
    { section, name: 'pre-model p99', value: round(result.pre.p99), unit: 'ms', target: { op: '<=', value: 25 } },
    { section, name: 'post-model p50', value: round(result.post.p50), unit: 'ms', target: { op: '<=', value: 4 } },
    { section, name: 'post-model p99', value: round(result.post.p99), unit: 'ms' },
    {
      section,
      name: 'floor p50 / p99 (same concurrency)',
      value: `${round(floor.p50)} / ${round(floor.p99)}`,
      unit: 'ms',
    },
    {
      section,
      name: 'pre-model p50 ÷ floor p50',
      value: round(result.pre.p50 / floor.p50),
      unit: '×',
      target: { op: '<=', value: 2 },
    },
    {
      section,
      name: 'post-model p50 ÷ floor p50',
      value: round(result.post.p50 / floor.p50),
      unit: '×',
      target: { op: '<=', value: 2 },
    },
    {
      section,
      name: 'whole turn p50 / p99 (client)',
      value: `${round(result.total.p50)} / ${round(result.total.p99)}`,
      unit: 'ms',
    },
  ];
}
