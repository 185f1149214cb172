/**
 * `npm run bench:fold`: only section 4 of `npm run bench` (fold latency with an instant summarizer, fold turns ÷
 * other turns with a 2 s one), on its own embedded Postgres and Redis, for trying changes to the fold path without
 * the whole run. `BENCH_QUICK=1` runs the short conversation (120 turns instead of 500); `BENCH_FOLD_RUNS=n`
 * repeats the instant-summarizer conversation n times and pools its folds (more folds, steadier percentiles);
 * `BENCH_FOLD_SLOW=0` skips the slow-summarizer conversation (its figures then read n/a).
 */
import os from 'node:os';
import { foldFigures, runOurConversation, type ConversationRun } from './conversation';
import { renderTable } from './support/report';
import { startServices } from './support/stack';

const quick = process.env.BENCH_QUICK === '1';
const turns = quick ? 120 : 500;
const runs = Math.max(1, Number.parseInt(process.env.BENCH_FOLD_RUNS ?? '1', 10) || 1);
const SLOW_SUMMARY_MS = 2000;

function log(message: string): void {
  process.stderr.write(`[bench:fold ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function main(): Promise<void> {
  const services = await startServices();
  try {
    const instantRuns: ConversationRun[] = [];
    for (let run = 1; run <= runs; run += 1) {
      log(`scripted conversation, ${turns} turns, instant summarizer (${run}/${runs})`);
      instantRuns.push(await runOurConversation(services, { turns, summaryDelayMs: 0, waitForFolds: true }));
    }
    const slow: ConversationRun =
      process.env.BENCH_FOLD_SLOW === '0'
        ? { turns: [], foldLatencyMs: [], foldCpuMs: [], summaryCalls: 0, summaryPromptTokens: [] }
        : (log(`scripted conversation, ${turns} turns, summarizer ${SLOW_SUMMARY_MS} ms`),
          await runOurConversation(services, { turns, summaryDelayMs: SLOW_SUMMARY_MS }));
    const instant: ConversationRun = {
      ...instantRuns[0]!,
      foldLatencyMs: instantRuns.flatMap((run) => run.foldLatencyMs),
      foldCpuMs: instantRuns.flatMap((run) => run.foldCpuMs),
    };
    process.stdout.write(
      `\nload average ${os
        .loadavg()
        .map((value) => value.toFixed(1))
        .join(' ')}${quick ? ' (BENCH_QUICK)' : ''}\n`,
    );
    process.stdout.write(`fold latencies (ms): ${instant.foldLatencyMs.map((value) => value.toFixed(1)).join(' ')}\n`);
    process.stdout.write(
      `server CPU per fold (ms): ${instant.foldCpuMs.map((value) => value.toFixed(1)).join(' ')}\n\n`,
    );
    process.stdout.write(`${renderTable(foldFigures(instant, slow, SLOW_SUMMARY_MS))}\n`);
  } finally {
    await services.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench:fold failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
