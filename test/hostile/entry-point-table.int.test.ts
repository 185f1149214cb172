import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_EVENT_NAMES } from '../../src/shared/socket-events';
import { expressRoutes } from '../support/express-routes';
import { startTestApp, type TestApp } from '../support/test-app';
import { HOSTILE_CASES } from './hostile-cases';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface EntryRow {
  entry: string;
  input: string;
  sizeBound: string;
  rateLimit: string;
  timeBound: string;
  tests: string[];
}

/** The rows of docs/security.md's entry-point table (the one whose header starts with `| entry point |`). */
function entryPointTable(): EntryRow[] {
  const lines = readFileSync(path.join(ROOT, 'docs/security.md'), 'utf8').split('\n');
  const header = lines.findIndex((line) => line.startsWith('| entry point |'));
  if (header === -1) throw new Error('docs/security.md has no table headed "| entry point |"');
  const rows: EntryRow[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .slice(1, -1)
      .split(' | ')
      .map((cell) => cell.trim());
    const [entry, input, sizeBound, rateLimit, timeBound, tests] = cells;
    rows.push({
      entry: (entry ?? '').replace(/`/g, ''),
      input: input ?? '',
      sizeBound: sizeBound ?? '',
      rateLimit: rateLimit ?? '',
      timeBound: timeBound ?? '',
      tests: [...(tests ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1]!),
    });
  }
  return rows;
}

describe("docs/security.md's entry-point table", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('lists exactly the routes the app serves and the socket events it handles', () => {
    const served = [
      ...expressRoutes(app.application.app, { exclude: ['/admin/jobs'] }),
      ...CLIENT_EVENT_NAMES.map((name) => `socket ${name}`),
    ].sort();
    const listed = entryPointTable()
      .map((row) => row.entry)
      .sort();
    expect(served.length).toBeGreaterThan(60);
    expect({
      missingFromTable: served.filter((entry) => !listed.includes(entry)),
      notServed: listed.filter((entry) => !served.includes(entry)),
    }).toEqual({ missingFromTable: [], notServed: [] });
  });

  it('gives every entry point a size bound, a rate limit, a time bound and a test that exists', () => {
    const incomplete = entryPointTable().filter(
      (row) =>
        !row.sizeBound ||
        !row.rateLimit ||
        !row.timeBound ||
        row.tests.length === 0 ||
        row.tests.some((test) => !existsSync(path.join(ROOT, test.split(' ')[0]!))),
    );
    expect(incomplete.map((row) => row.entry)).toEqual([]);
  });

  it('covers every entry point that takes client text or JSON with a hostile-input case', () => {
    const withInput = entryPointTable().filter((row) => /text|JSON/.test(row.input));
    const covered = new Set(HOSTILE_CASES.map((hostileCase) => hostileCase.entry));
    const uncovered = withInput.filter((row) => !covered.has(row.entry));
    expect(uncovered.map((row) => row.entry)).toEqual([]);
  });
});
