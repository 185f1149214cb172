/**
 * `npm run bench:memory`: the memory section of `npm run bench` alone (section 7's heap figures: 200 busy threads,
 * the throughput and 1-in-flight runs as warm-up, 100,000 seeded messages, then settled heap points after each
 * run). Prints its figures; nothing is written to bench/results/. `BENCH_QUICK=1` runs shorter versions.
 */
import { memoryFigures } from './memory-figures';
import { renderTable } from './support/report';
import { startServices, stopOnSignals } from './support/stack';
import { measureThroughputAndMemory } from './throughput';

const quick = process.env.BENCH_QUICK === '1';
const scale = (full: number, short: number) => (quick ? short : full);

const services = await startServices();
const removeHandlers = stopOnSignals(
  () => services.stop(),
  (message) => process.stderr.write(`${message}\n`),
);
try {
  const { memory } = await measureThroughputAndMemory(services, {
    threads: 200,
    seconds: scale(20, 8),
    oneInFlightSeconds: scale(15, 6),
    seedMessages: 100_000,
    memoryRuns: 6,
    memorySeconds: scale(10, 5),
  });
  process.stdout.write(`\n${renderTable(memoryFigures(memory))}\n`);
} finally {
  removeHandlers();
  await services.stop();
}
process.exit(0);
