import { describe, expect, it } from 'vitest';
import { checkRetention, extractIdentifiers, mustKeepVerbatim } from './extract-identifiers';
import { entry } from './test-fixtures';
import type { ContextEntry } from './types';

describe('extractIdentifiers', () => {
  it('finds URLs, paths, ids, codes, numbers with units, money, dates and proper names', () => {
    const text =
      'Deploy https://example.com/app?x=1. to /srv/app/current/config.yml for order INV-2024-001, ' +
      'ticket #4521 and build a1b2c3d4; the disk has 250 GB, costs $1,200 and is due 2026-03-01. ' +
      'Ask Ada Lovelace, then tell Grace. See notes.md or C:\\Users\\me\\file.txt, mail ops@example.org, ' +
      'id 123e4567-e89b-12d3-a456-426614174000, 98.6 °F and 42 kg.';
    const found = extractIdentifiers(text);
    for (const expected of [
      'https://example.com/app?x=1',
      '/srv/app/current/config.yml',
      'INV-2024-001',
      '#4521',
      'a1b2c3d4',
      '250 GB',
      '$1,200',
      '2026-03-01',
      'Ada Lovelace',
      'Grace',
      'notes.md',
      'C:\\Users\\me\\file.txt',
      'ops@example.org',
      '123e4567-e89b-12d3-a456-426614174000',
      '42 kg',
    ]) {
      expect(found).toContain(expected);
    }
  });

  it('skips sentence-initial capitals and plain short words, and reports each identifier once', () => {
    expect(extractIdentifiers('The cat sat. It was 3 years old. The cat sat.')).toEqual(['3 years']);
    expect(extractIdentifiers('call INV-9 and INV-9 again')).toEqual(['INV-9']);
    expect(extractIdentifiers('')).toEqual([]);
  });

  it('still finds codes and e-mails after a run of look-alike characters', () => {
    expect(extractIdentifiers('see a.-b+c@example.org and x-y--INV-2024-001, not plain-words-here')).toEqual([
      'a.-b+c@example.org',
      'INV-2024-001',
    ]);
  });

  /** Best of three runs, after one warm-up: the machine is shared, a quadratic pattern takes seconds anyway. */
  function fastestMilliseconds(text: string): number {
    extractIdentifiers(text.slice(0, 1000));
    let best = Infinity;
    for (let run = 0; run < 3 && best >= 100; run += 1) {
      const started = performance.now();
      extractIdentifiers(text);
      best = Math.min(best, performance.now() - started);
    }
    return best;
  }

  it.each([
    ['a-a-a-…', 'a-'],
    ['a.a.a.…', 'a.'],
    ['1,1,1,…', '1,'],
    ['x@a-x@a-…', 'x@a-'],
    ['#1 #1 …', '#1 '],
    ['spaces', ' '],
  ])('scans 64K characters of %s in under 100 ms (linear patterns)', (_name, unit) => {
    const text = unit.repeat(Math.ceil(65_536 / unit.length)).slice(0, 65_536);
    expect(fastestMilliseconds(text)).toBeLessThan(100);
  });
});

describe('checkRetention', () => {
  const folded = [
    entry(1, 'user', 10, { content: 'My order INV-2024-001 shipped to /home/ada/orders.csv' }),
    entry(2, 'assistant', 10, {
      content: '',
      toolCalls: [{ id: 'c', name: 'track', args: { url: 'https://track.example.com/x1' } }],
    }),
  ];

  it('counts the identifiers the summary kept, ignoring case and whitespace', () => {
    const report = checkRetention({ folded, summary: 'Order inv-2024-001, file /home/ada/orders.csv [#1].' });
    expect(report).toEqual({
      kept: 2,
      total: 3,
      missing: ['https://track.example.com/x1'],
      missingVerbatim: ['https://track.example.com/x1'],
    });
  });

  it("ignores the offline model's answers: their counts and token totals are nothing to keep", () => {
    const folded: ContextEntry[] = [
      { seq: 1, role: 'user', content: 'The budget is 18,000 EUR.', tokens: 0 },
      {
        seq: 2,
        role: 'assistant',
        content: '[offline model] You said: "The budget". My context: 13 messages (1 system), 632 tokens, #13.',
        tokens: 0,
      },
    ];
    const report = checkRetention({ folded, summary: '- The budget is 18,000 EUR. [#1]' });
    expect(report).toMatchObject({ missing: [], kept: report.total });
  });

  it('reports all missing for an empty summary and nothing for no identifiers', () => {
    expect(checkRetention({ folded, summary: '' }).missing).toHaveLength(3);
    expect(checkRetention({ folded: [entry(1, 'user', 1, { content: 'hi there' })], summary: '' })).toEqual({
      kept: 0,
      total: 0,
      missing: [],
      missingVerbatim: [],
    });
  });
});

describe('mustKeepVerbatim', () => {
  it('asks again for codes, numbers and addresses, not for names and bare years a summary may put in other words', () => {
    for (const kept of [
      'C4R55T901',
      'INV-2024-001',
      'https://x.example/a',
      '$4,500',
      '12 kg',
      '#42',
      '20231',
      'ada@example.com',
    ])
      expect(mustKeepVerbatim(kept)).toBe(true);
    for (const free of ['Caroline', 'Ada Lovelace', 'Émile', '2023', '1999'])
      expect(mustKeepVerbatim(free)).toBe(false);
  });

  it('reports, of what a summary lost, the identifiers it must keep verbatim', () => {
    const folded = [entry(1, 'user', 10, { content: 'Thanks, Melanie! In 2023 my locker code was C4R55T901.' })];
    const report = checkRetention({ folded, summary: 'They talked about lockers.' });
    expect(report.missing).toEqual(['Melanie', '2023', 'C4R55T901']);
    expect(report.missingVerbatim).toEqual(['C4R55T901']);
  });
});
