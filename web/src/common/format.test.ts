import { describe, expect, it } from 'vitest';
import { plainPreview } from './format';

describe('plainPreview', () => {
  it('reads a markdown summary as one line of words: no heading marks, bullets or emphasis', () => {
    const summary =
      '## Offsite\n- **Budget**: 20,000 euros (#1)\n- Venue shortlist: [Lakeside](https://x.test)\n\n1. Caterer `Green Fork`';
    expect(plainPreview(summary)).toBe(
      'Offsite · Budget: 20,000 euros (#1) · Venue shortlist: Lakeside · Caterer Green Fork',
    );
  });

  it('leaves plain text as it is', () => {
    expect(plainPreview('The budget is 20,000 euros.')).toBe('The budget is 20,000 euros.');
  });
});
