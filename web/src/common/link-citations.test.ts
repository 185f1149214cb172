import { describe, expect, it } from 'vitest';
import { citedRange, linkCitations } from './link-citations';

describe('linkCitations', () => {
  it('turns single, ranged and listed citations into links and leaves other text alone', () => {
    expect(linkCitations('Budget agreed [#12]. Hotel [#40–44], visa [#3, #9-7]. Tag [not] #5.')).toBe(
      'Budget agreed \\[[#12](#cite-12-12)\\]. Hotel \\[[#40–44](#cite-40-44)\\], visa \\[[#3](#cite-3-3), [#7–9](#cite-7-9)\\]. Tag [not] #5.',
    );
  });

  it('reads the range back from a link, and nothing from other links', () => {
    expect(citedRange('#cite-40-44')).toEqual({ from: 40, through: 44 });
    expect(citedRange('https://example.com/#cite-1-2')).toBeNull();
    expect(citedRange(undefined)).toBeNull();
  });
});
