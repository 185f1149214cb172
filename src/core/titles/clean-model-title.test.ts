import { describe, expect, it } from 'vitest';
import { cleanModelTitle } from './clean-model-title';

describe('cleanModelTitle', () => {
  it('keeps a plain title as it is', () => {
    expect(cleanModelTitle('Lisbon team offsite planning')).toBe('Lisbon team offsite planning');
  });

  it('drops labels, quotes, markdown and trailing punctuation', () => {
    expect(cleanModelTitle('Title: "Lisbon offsite planning."')).toBe('Lisbon offsite planning');
    expect(cleanModelTitle('**Chat title:** Budget review')).toBe('Budget review');
    expect(cleanModelTitle('“Weekly meal plan”')).toBe('Weekly meal plan');
  });

  it('takes the first line with words, after any reasoning block, at most eight words', () => {
    expect(cleanModelTitle('<think>the user wants a trip</think>\n\nTrip to Porto\nSecond line')).toBe('Trip to Porto');
    expect(cleanModelTitle('one two three four five six seven eight nine ten')).toBe(
      'One two three four five six seven eight',
    );
  });

  it('is empty when the answer holds no title', () => {
    expect(cleanModelTitle('')).toBe('');
    expect(cleanModelTitle('  \n "" \n')).toBe('');
  });
});
