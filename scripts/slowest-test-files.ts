/**
 * Prints the slowest test files of a CI run, from the JSON reports .ci/run asks vitest and Playwright for
 * (VITEST_JSON_REPORT, PLAYWRIGHT_JSON_REPORT): `node --import tsx scripts/slowest-test-files.ts [--top N] <report.json>...`.
 * A missing or unreadable report is skipped (a stage that failed before writing one), so this never fails CI.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface FileTiming {
  file: string;
  seconds: number;
  /** vitest, playwright */
  runner: string;
  /** Tests in the file whose result was a retry (Playwright's `retry` > 0, vitest's `retryCount` > 0). */
  retried: number;
}

interface VitestReport {
  testResults: { name: string; startTime: number; endTime: number; assertionResults?: { retryCount?: number }[] }[];
}

interface PlaywrightSuite {
  file?: string;
  specs?: { file?: string; tests?: { results?: { duration?: number; retry?: number }[] }[] }[];
  suites?: PlaywrightSuite[];
}

interface PlaywrightReport {
  suites: PlaywrightSuite[];
}

function relative(file: string, root: string): string {
  return path.isAbsolute(file) ? path.relative(root, file) : file;
}

/** Per-file wall time of a vitest JSON report (from each file's start to its end). */
export function vitestTimings(report: VitestReport, root: string): FileTiming[] {
  return report.testResults.map((result) => ({
    file: relative(result.name, root),
    seconds: Math.max(0, result.endTime - result.startTime) / 1000,
    runner: 'vitest',
    retried: (result.assertionResults ?? []).filter((assertion) => (assertion.retryCount ?? 0) > 0).length,
  }));
}

/** Per-file time of a Playwright JSON report: the sum of its tests' results (attempts included). */
export function playwrightTimings(report: PlaywrightReport, root: string, testDir = 'test/browser'): FileTiming[] {
  const byFile = new Map<string, FileTiming>();
  const visit = (suite: PlaywrightSuite) => {
    for (const spec of suite.specs ?? []) {
      const file = path.join(testDir, spec.file ?? suite.file ?? 'unknown');
      const timing = byFile.get(file) ?? { file: relative(file, root), seconds: 0, runner: 'playwright', retried: 0 };
      for (const test of spec.tests ?? []) {
        for (const result of test.results ?? []) {
          timing.seconds += (result.duration ?? 0) / 1000;
          if ((result.retry ?? 0) > 0) timing.retried += 1;
        }
      }
      byFile.set(file, timing);
    }
    for (const child of suite.suites ?? []) visit(child);
  };
  for (const suite of report.suites) visit(suite);
  return [...byFile.values()];
}

/** The timings of one report file, whichever runner wrote it; [] when it is missing or not a report. */
export function timingsOf(reportPath: string, root: string): FileTiming[] {
  if (!existsSync(reportPath)) return [];
  try {
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Partial<VitestReport & PlaywrightReport>;
    if (Array.isArray(report.testResults)) return vitestTimings(report as VitestReport, root);
    if (Array.isArray(report.suites)) return playwrightTimings(report as PlaywrightReport, root);
  } catch {
    // A report cut short by a failed stage: nothing to show from it.
  }
  return [];
}

/** The report's lines: the `top` slowest files, and any retried test (there should be none). */
export function formatSlowest(timings: FileTiming[], top = 10): string {
  const slowest = [...timings].sort((left, right) => right.seconds - left.seconds).slice(0, top);
  const lines = [`ci: the ${slowest.length} slowest test files`];
  for (const timing of slowest)
    lines.push(`ci:   ${timing.seconds.toFixed(1).padStart(7)} s  ${timing.file} (${timing.runner})`);
  const retried = timings.filter((timing) => timing.retried > 0);
  for (const timing of retried) lines.push(`ci: RETRIED ${timing.retried} test(s) in ${timing.file}`);
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 10;
  const root = path.resolve(import.meta.dirname, '..');
  const timings = args.flatMap((report) => timingsOf(report, root));
  process.stdout.write(`${timings.length > 0 ? formatSlowest(timings, top) : 'ci: no test reports to rank'}\n`);
}
