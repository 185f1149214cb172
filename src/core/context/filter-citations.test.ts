import { describe, expect, it } from 'vitest';
import { filterCitations } from './filter-citations';

const filter = (summary: string) => filterCitations({ summary, fromSeq: 10, throughSeq: 50 });

describe('filterCitations', () => {
  it('keeps citations inside the covered range', () => {
    expect(filter('Chose Postgres [#12]. Sizes [#40–44] and [#40-44].')).toBe(
      'Chose Postgres [#12]. Sizes [#40–44] and [#40–44].',
    );
  });

  it('removes citations outside the range with the space before them', () => {
    expect(filter('Invented [#99]. Early [#3]. Kept [#10].')).toBe('Invented. Early. Kept [#10].');
  });

  it('clamps ranges reaching outside and filters lists item by item', () => {
    expect(filter('Range [#45–60]. List [#3, #12, #48–52, #70].')).toBe('Range [#45–50]. List [#12, #48–50].');
    expect(filter('Reversed [#44–40].')).toBe('Reversed [#40–44].');
    expect(filter('Collapsed [#50–70].')).toBe('Collapsed [#50].');
  });

  it('leaves other brackets and text alone', () => {
    expect(filter('See [docs] and #99 and [#x].')).toBe('See [docs] and #99 and [#x].');
  });
});
