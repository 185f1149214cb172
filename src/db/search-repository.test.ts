import { describe, expect, it } from 'vitest';
import { parseHeadline, withEllipses } from './search-repository';

const message =
  'We met on Monday. After a long talk the team chose the lakeside venue for the offsite, which has room for forty. Dinner is at eight.';

describe('withEllipses', () => {
  it('marks a snippet cut from the middle of a message at both ends and shifts its highlights', () => {
    const marked = 'team chose the \u0001lakeside\u0002 venue for the offsite';
    const result = withEllipses(parseHeadline(marked), { head: message, tail: message });
    expect(result.snippet).toBe('… team chose the lakeside venue for the offsite …');
    const [highlight] = result.highlights;
    expect(result.snippet.slice(highlight!.start, highlight!.end)).toBe('lakeside');
  });

  it('adds nothing to a snippet that is the whole message', () => {
    const marked = 'We met on \u0001Monday\u0002.';
    const result = withEllipses(parseHeadline(marked), { head: 'We met on  Monday.', tail: 'We met on  Monday.' });
    expect(result.snippet).toBe('We met on Monday.');
  });

  it('marks only the end of a snippet that starts where the message starts', () => {
    const result = withEllipses(parseHeadline('We met on \u0001Monday\u0002. After a long talk'), {
      head: message,
      tail: message,
    });
    expect(result.snippet).toBe('We met on Monday. After a long talk …');
  });
});
