import { describe, expect, it } from 'vitest';
import { condenseOversizedMessage, MIN_CONDENSED_MESSAGE_TOKENS } from './condense-oversized-message';
import { upperBoundMessageTokens, type MessageMeasure } from './measure-message';
import { createTokenCounter } from './token-counter';
import type { ContextEntry } from './types';

const counter = createTokenCounter('o200k_base');
const measure: MessageMeasure = (message) => counter.countMessage(message);

function message(content: string): ContextEntry {
  return { seq: 7, role: 'user', content, tokens: counter.countMessage({ role: 'user', content }) };
}

describe('condenseOversizedMessage', () => {
  const long = message(`Opening line. ${'Lorem ipsum dolor sit amet, consectetur. '.repeat(800)}Closing question?`);

  it('keeps the head and the tail within the tokens, with a marker naming the cut and the seq', () => {
    for (const tokens of [MIN_CONDENSED_MESSAGE_TOKENS, 400, 3000]) {
      const condensed = condenseOversizedMessage({ entry: long, tokens, measure });
      expect(condensed).not.toBeNull();
      expect(condensed!.tokens).toBeLessThanOrEqual(tokens);
      expect(condensed!.tokens).toBe(measure({ role: 'user', content: condensed!.content }));
      expect(condensed!.content.startsWith('Opening line.')).toBe(true);
      expect(condensed!.content.endsWith('Closing question?')).toBe(true);
      const cut = Number(/\[… (\d+) of this message's (\d+) characters/.exec(condensed!.content)?.[1]);
      expect(cut).toBeGreaterThan(0);
      expect(condensed!.content).toContain(`characters are left out here`);
      expect(condensed!.content).toContain('transcript as #7');
      expect(condensed!.seq).toBe(7);
    }
  });

  it('returns a message that fits as it is, and null below the minimum', () => {
    const short = message('A short message.');
    expect(condenseOversizedMessage({ entry: short, tokens: 500, measure })).toEqual(short);
    expect(condenseOversizedMessage({ entry: long, tokens: MIN_CONDENSED_MESSAGE_TOKENS - 1, measure })).toBeNull();
  });

  it('works with the byte upper bound when there is no counter', () => {
    const condensed = condenseOversizedMessage({ entry: long, tokens: 600, measure: upperBoundMessageTokens });
    expect(upperBoundMessageTokens({ role: 'user', content: condensed!.content })).toBeLessThanOrEqual(600);
  });
});
