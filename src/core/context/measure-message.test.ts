import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { upperBoundMessageTokens, upperBoundTextTokens } from './measure-message';
import { createTokenCounter } from './token-counter';

const counters = [createTokenCounter('o200k_base'), createTokenCounter('cl100k_base')];

describe('upper bounds without a tokenizer', () => {
  it('never undercount a message (fast-check, any unicode text and tool calls)', () => {
    const message = fc.record({
      role: fc.constantFrom('system' as const, 'user' as const, 'assistant' as const, 'tool' as const),
      content: fc.string({ unit: 'binary', maxLength: 200 }),
      toolCalls: fc.array(
        fc.record({
          id: fc.string(),
          name: fc.string({ minLength: 1 }),
          args: fc.dictionary(fc.string(), fc.string()),
        }),
        { maxLength: 3 },
      ),
    });
    fc.assert(
      fc.property(message, (item) => {
        for (const counter of counters) {
          expect(upperBoundMessageTokens(item)).toBeGreaterThanOrEqual(counter.countMessage(item));
          expect(upperBoundTextTokens(item.content)).toBeGreaterThanOrEqual(counter.countText(item.content));
        }
      }),
    );
  });

  it('is the UTF-8 length plus the message overhead', () => {
    expect(upperBoundTextTokens('héllo')).toBe(6);
    expect(upperBoundMessageTokens({ role: 'user', content: 'hi' })).toBe(3 + 1 + 2);
  });
});
