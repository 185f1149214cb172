import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors/app-error';
import { toAnthropicError } from './anthropic-errors';
import { anthropicUsage, contentOf, TextCap } from './message-object';

/** One token a word, as a whitespace-split count. */
const words = { countText: (text: string) => text.split(/\s+/).filter(Boolean).length };

describe('TextCap', () => {
  it('passes pieces while they fit, cuts the one that crosses the cap, and nothing after it', () => {
    const cap = new TextCap(5, words);
    expect(cap.take('one two ')).toBe('one two ');
    expect(cap.reached).toBe(false);
    expect(cap.take('three four five six seven')).toBe('three four five ');
    expect(cap.reached).toBe(true);
    expect(cap.take('eight')).toBe('');
  });
});

describe('the message shapes', () => {
  it("reports the upstream's cached tokens as cache reads, the rest as input", () => {
    expect(anthropicUsage({ promptTokens: 1500, completionTokens: 20, cachedTokens: 1024 })).toEqual({
      input_tokens: 476,
      output_tokens: 20,
      cache_read_input_tokens: 1024,
      cache_creation_input_tokens: 0,
    });
    expect(anthropicUsage({ promptTokens: 10, completionTokens: 2, cachedTokens: null }).cache_read_input_tokens).toBe(
      0,
    );
    // A Claude upstream's cache writes: reported apart, out of input_tokens, as Anthropic reports them.
    expect(
      anthropicUsage({ promptTokens: 1500, completionTokens: 20, cachedTokens: 1024, cacheWriteTokens: 300 }),
    ).toEqual({
      input_tokens: 176,
      output_tokens: 20,
      cache_read_input_tokens: 1024,
      cache_creation_input_tokens: 300,
    });
  });

  it('answers a text block, then tool_use blocks under the names the client offered', () => {
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'ns__run', arguments: '{"a":1}' } };
    expect(contentOf('', [call], new Map([['ns__run', { name: 'run' }]]))).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'run', input: { a: 1 } },
    ]);
    expect(contentOf('', [], new Map())).toEqual([{ type: 'text', text: '' }]);
  });

  it("maps our codes to Anthropic's error types and statuses", () => {
    const shaped = (code: ConstructorParameters<typeof AppError>[0]) =>
      toAnthropicError(new AppError(code, 'why'), 'req-1');
    expect(shaped('VALIDATION')).toMatchObject({
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'why' }, request_id: 'req-1' },
    });
    expect(shaped('UNAUTHORIZED').body.error.type).toBe('authentication_error');
    expect(shaped('TOO_LARGE')).toMatchObject({ status: 413, body: { error: { type: 'request_too_large' } } });
    expect(shaped('RATE_LIMITED')).toMatchObject({ status: 429, body: { error: { type: 'rate_limit_error' } } });
    expect(shaped('BUSY').retryAfterSeconds).toBe(1);
    expect(shaped('PROVIDER_TIMEOUT')).toMatchObject({ status: 504, body: { error: { type: 'timeout_error' } } });
    expect(shaped('UNAVAILABLE')).toMatchObject({ status: 529, body: { error: { type: 'overloaded_error' } } });
    expect(shaped('INTERNAL')).toMatchObject({ status: 500, body: { error: { type: 'api_error' } } });
  });
});
