import { defineConfig } from 'vitest/config';

// Two projects: fast unit tests next to the code, and integration tests that run against
// real Postgres and Redis started once by test/support/global-setup.ts.
// VITEST_JSON_REPORT (set by .ci/run): also write a JSON report there, which scripts/slowest-test-files.ts ranks.
const jsonReport = process.env.VITEST_JSON_REPORT;

export default defineConfig({
  test: {
    ...(jsonReport ? { reporters: ['default', 'json'], outputFile: { json: jsonReport } } : {}),
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'web/src/**/*.test.ts', 'test/**/*.unit.test.ts'],
          exclude: ['**/*.int.test.ts', 'node_modules/**'],
          // Loading a tokenizer's ranks takes about a second alone, far more on a busy machine: a timeout here
          // must not fail a test that only waited for the encoder (the assertions are what judge it).
          testTimeout: 30_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.int.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: true,
          maxWorkers: 2,
          // Unit tests first, then integration tests (their own worker limit needs their own group).
          sequence: { groupOrder: 1 },
        },
      },
      {
        // Slow fault, load and child-process tests (Postgres restart, 50x40 load, SIGTERM under traffic, several
        // serve/worker processes): `npm run test:reliability` (also run by .ci/run); `npm test` runs unit + integration.
        test: {
          name: 'reliability',
          include: ['test/**/*.rel.test.ts', 'test/**/*.reliability.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
