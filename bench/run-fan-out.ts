/**
 * `npm run bench:fan-out`: the fan-out benchmark alone (bench/fan-out.ts), `BENCH_ROUNDS` times (default 1) on
 * one embedded Postgres and Redis, each round with a fresh app and 1,000 fresh tabs (`BENCH_TABS`). Prints the
 * figures of each round; for trying a change to the socket path without the whole `npm run bench`.
 */
import os from 'node:os';
import { fanOutFigures, measureFanOut } from './fan-out';
import { renderTable } from './support/report';
import { startServices } from './support/stack';

const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
const tabs = Number(process.env.BENCH_TABS ?? 1000);

async function main(): Promise<void> {
  const services = await startServices();
  try {
    for (let round = 1; round <= rounds; round += 1) {
      const fanOut = await measureFanOut(services, { tabs, chunks: 40 });
      const load = os
        .loadavg()
        .map((value) => value.toFixed(1))
        .join(' ');
      process.stdout.write(
        `\nround ${round} of ${rounds}, load average ${load}\n${renderTable(fanOutFigures(fanOut, '0 server CPU'))}\n`,
      );
    }
  } finally {
    await services.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
