import { defineConfig } from '@playwright/test';

/**
 * Browser tests: Debian's Chromium (`apt-get install chromium`; Playwright's own download needs the network).
 * The global setup starts Postgres and Redis once and builds the web app when stale; each spec file starts the
 * real application in its worker against a fresh database and an OpenAI-compatible stub it scripts.
 */
export default defineConfig({
  testDir: 'test/browser',
  testMatch: '**/*.spec.ts',
  outputDir: 'test-results',
  globalSetup: './test/browser/support/global-setup.ts',
  fullyParallel: false,
  workers: 1,
  // No retries: a failure is a failure. (The first-visit race that one retry used to hide, "No such thread" on a fresh
  // guest, was two guests signed in at once: see ensureGuestSession and scripts/build-web.ts.)
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 15_000 },
  // PLAYWRIGHT_JSON_REPORT (set by .ci/run): also a JSON report there, which scripts/slowest-test-files.ts ranks.
  reporter: process.env.PLAYWRIGHT_JSON_REPORT
    ? [['list'], ['json', { outputFile: process.env.PLAYWRIGHT_JSON_REPORT }]]
    : [['list']],
  use: {
    browserName: 'chromium',
    viewport: { width: 1440, height: 900 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
