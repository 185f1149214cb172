import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatSlowest, timingsOf } from '../../scripts/slowest-test-files';

const root = '/repo';

describe('the slowest test files of a CI run', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'slowest-'));
  const vitestReport = path.join(dir, 'vitest.json');
  writeFileSync(
    vitestReport,
    JSON.stringify({
      testResults: [
        { name: '/repo/test/a.int.test.ts', startTime: 1000, endTime: 61_000, assertionResults: [{}] },
        { name: '/repo/test/b.int.test.ts', startTime: 0, endTime: 2500, assertionResults: [{ retryCount: 1 }] },
      ],
    }),
  );
  const playwrightReport = path.join(dir, 'playwright.json');
  writeFileSync(
    playwrightReport,
    JSON.stringify({
      suites: [
        {
          file: 'chat.spec.ts',
          specs: [],
          suites: [
            {
              specs: [
                {
                  file: 'chat.spec.ts',
                  tests: [{ results: [{ duration: 8000, retry: 0 }] }, { results: [{ duration: 4500, retry: 0 }] }],
                },
              ],
            },
          ],
        },
      ],
    }),
  );

  it('ranks vitest and Playwright files together by their time, slowest first, and names any retried test', () => {
    const timings = [...timingsOf(vitestReport, root), ...timingsOf(playwrightReport, root)];
    expect(timings).toEqual(
      expect.arrayContaining([
        { file: 'test/a.int.test.ts', seconds: 60, runner: 'vitest', retried: 0 },
        { file: 'test/browser/chat.spec.ts', seconds: 12.5, runner: 'playwright', retried: 0 },
      ]),
    );
    const printed = formatSlowest(timings, 2).split('\n');
    expect(printed).toEqual([
      'ci: the 2 slowest test files',
      'ci:      60.0 s  test/a.int.test.ts (vitest)',
      'ci:      12.5 s  test/browser/chat.spec.ts (playwright)',
      'ci: RETRIED 1 test(s) in test/b.int.test.ts',
    ]);
  });

  it('skips a report a failed stage never wrote, or cut short', () => {
    const cut = path.join(dir, 'cut.json');
    writeFileSync(cut, '{"testResults": [');
    expect(timingsOf(path.join(dir, 'missing.json'), root)).toEqual([]);
    expect(timingsOf(cut, root)).toEqual([]);
  });
});
