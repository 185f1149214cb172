import { describe, expect, it } from 'vitest';
import { TITLE_MAX_CHARS, titleFromWords } from './title-from-words';

describe('titleFromWords', () => {
  it('keeps the first six words of the first message, capitalised, without trailing punctuation', () => {
    expect(titleFromWords('can you help me plan a team offsite in Lisbon next spring?')).toBe('Can you help me plan');
    expect(titleFromWords('Plan my week.')).toBe('Plan my week');
    expect(titleFromWords('I want to book a trip to Lisbon')).toBe('I want to book a trip');
    expect(titleFromWords('Tell me about the history of Rome')).toBe('Tell me about the history');
    expect(titleFromWords('Go to the shop')).toBe('Go to the shop');
    expect(titleFromWords('A trip to Lisbon (Portugal)')).toBe('A trip to Lisbon (Portugal)');
    expect(titleFromWords('  Hello there!!!  ')).toBe('Hello there');
    expect(titleFromWords('What about Porto, Lisbon, or Madrid?')).toBe('What about Porto, Lisbon, or Madrid');
  });

  it('takes the first line with words and leaves markdown, code, links and quotes out', () => {
    expect(titleFromWords('\n\n```js\nconst x = 1;\n```\nWhy does **this** loop never end?')).toBe(
      'Why does this loop never end',
    );
    expect(titleFromWords('# Trip notes\nmore text')).toBe('Trip notes');
    expect(titleFromWords('"Summarise [the report](https://example.com/r.pdf) please"')).toBe(
      'Summarise the report please',
    );
    expect(titleFromWords('see https://example.com/a/very/long/path for details')).toBe('See for details');
  });

  it('stays within a sidebar line: a long word run is cut at a word, one endless word at the cap', () => {
    const long = titleFromWords('Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonia');
    expect(long.length).toBeLessThanOrEqual(TITLE_MAX_CHARS);
    expect(long).toBe('Supercalifragilisticexpialidocious');
    expect(titleFromWords('x'.repeat(500))).toBe('X'.padEnd(TITLE_MAX_CHARS, 'x'));
  });

  it('is empty when the message has no words', () => {
    expect(titleFromWords('')).toBe('');
    expect(titleFromWords('?!… —')).toBe('');
    expect(titleFromWords('```\n\n```')).toBe('');
  });

  it('keeps non-Latin scripts', () => {
    expect(titleFromWords('¿Dónde está la estación de tren más cercana?')).toBe('Dónde está la estación de tren');
    expect(titleFromWords('東京で一番おいしいラーメン屋はどこ？')).toBe('東京で一番おいしいラーメン屋はどこ');
  });
});
