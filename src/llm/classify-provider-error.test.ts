import { APIError } from '@anthropic-ai/sdk';
import { ContextOverflowError } from '@langchain/core/errors';
import { describe, expect, it } from 'vitest';
import { classifyProviderError, ModelCallError, parseRetryAfterMs } from './classify-provider-error.js';

/** Shaped like the openai SDK's APIError subclasses. */
function apiError(status: number, options: { code?: string; message?: string; headers?: Record<string, string> } = {}) {
  return Object.assign(new Error(`${status} ${options.message ?? 'failed'}`), {
    status,
    code: options.code ?? null,
    headers: new Headers(options.headers ?? {}),
  });
}

describe('classifyProviderError', () => {
  it('reads context overflow from LangChain, the code, or the message', () => {
    expect(
      classifyProviderError(ContextOverflowError.fromError(apiError(400, { code: 'context_length_exceeded' }))),
    ).toMatchObject({ kind: 'context_overflow', retryable: false, status: 400 });
    expect(classifyProviderError(apiError(400, { code: 'context_length_exceeded' })).kind).toBe('context_overflow');
    expect(classifyProviderError(new Error("This model's maximum context length is 8192 tokens")).kind).toBe(
      'context_overflow',
    );
  });

  it('reads rate limits, with retry-after-ms, seconds or a date, and treats an exhausted quota as final', () => {
    expect(
      classifyProviderError(apiError(429, { headers: { 'retry-after-ms': '250', 'retry-after': '9' } })),
    ).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 250 });
    expect(classifyProviderError(apiError(429, { headers: { 'retry-after': '1.5' } })).retryAfterMs).toBe(1500);
    expect(classifyProviderError(apiError(429)).retryAfterMs).toBeUndefined();
    expect(classifyProviderError(apiError(429, { code: 'insufficient_quota' }))).toMatchObject({
      kind: 'rate_limited',
      retryable: false,
    });
    const now = Date.parse('2026-11-21T10:00:00Z');
    expect(parseRetryAfterMs({ 'retry-after': 'Sat, 21 Nov 2026 10:00:30 GMT' }, now)).toBe(30_000);
    expect(parseRetryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
  });

  it('maps statuses', () => {
    expect(classifyProviderError(apiError(500))).toMatchObject({ kind: 'server', retryable: true });
    expect(classifyProviderError(apiError(502))).toMatchObject({ kind: 'server', retryable: true });
    expect(classifyProviderError(apiError(408))).toMatchObject({ kind: 'timeout', retryable: true });
    expect(classifyProviderError(apiError(401))).toMatchObject({ kind: 'bad_request', retryable: false, status: 401 });
    expect(classifyProviderError(apiError(404))).toMatchObject({ kind: 'bad_request', retryable: false });
  });

  it('reads aborts, timeouts and connection failures through causes', () => {
    expect(classifyProviderError(new DOMException('This operation was aborted', 'AbortError')).kind).toBe('aborted');
    expect(
      classifyProviderError(Object.assign(new Error('Request timed out.'), { name: 'TimeoutError' })),
    ).toMatchObject({ kind: 'timeout', retryable: true });
    const refused = new Error('Connection error.', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });
    expect(classifyProviderError(refused)).toMatchObject({ kind: 'network', retryable: true });
    const cut = new TypeError('terminated', {
      cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    });
    expect(classifyProviderError(cut)).toMatchObject({ kind: 'network', retryable: true });
  });

  it('says aborted whenever the call signal fired, whatever the error', () => {
    const controller = new AbortController();
    controller.abort(new Error('turn cancelled'));
    expect(classifyProviderError(new Error('turn cancelled'), { signal: controller.signal })).toMatchObject({
      kind: 'aborted',
      retryable: false,
    });
  });

  it('strips LangChain troubleshooting text, keeps unknown errors non-retryable, and is idempotent', () => {
    const wrapped = Object.assign(apiError(404, { message: 'model not found' }), {
      message: '404 model not found\n\nTroubleshooting URL: https://docs.langchain.com/x/\n',
    });
    expect(classifyProviderError(wrapped).message).toBe('404 model not found');
    expect(classifyProviderError(new RangeError('bug'))).toEqual({ kind: 'server', retryable: false, message: 'bug' });
    const error = new ModelCallError({
      classification: { kind: 'rate_limited', retryable: true, retryAfterMs: 5, status: 429, message: 'slow down' },
      cause: null,
    });
    expect(classifyProviderError(error)).toEqual({
      kind: 'rate_limited',
      retryable: true,
      retryAfterMs: 5,
      status: 429,
      message: 'slow down',
    });
  });

  it("maps Anthropic's errors: 529 overloaded and 429 retry, 'prompt is too long' overflows, a mid-stream error event retries", () => {
    const body = (type: string, message: string) => ({ type: 'error', error: { type, message } });
    const overloaded = APIError.generate(529, body('overloaded_error', 'Overloaded'), undefined, new Headers());
    expect(classifyProviderError(overloaded)).toMatchObject({ kind: 'server', retryable: true, status: 529 });
    const limited = APIError.generate(
      429,
      body('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'),
      undefined,
      new Headers({ 'retry-after': '3' }),
    );
    expect(classifyProviderError(limited)).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 3000 });
    const tooLong = APIError.generate(
      400,
      body('invalid_request_error', 'prompt is too long: 214318 tokens > 200000 maximum'),
      undefined,
      new Headers(),
    );
    expect(classifyProviderError(tooLong)).toMatchObject({ kind: 'context_overflow', retryable: false, status: 400 });
    // The SDK raises an `error` event of a stream that began with 200 without a status.
    const midStream = new APIError(undefined, body('overloaded_error', 'Overloaded'), undefined, new Headers());
    expect(classifyProviderError(midStream)).toMatchObject({ kind: 'server', retryable: true });
    const invalid = APIError.generate(400, body('invalid_request_error', 'bad field'), undefined, new Headers());
    expect(classifyProviderError(invalid)).toMatchObject({ kind: 'bad_request', retryable: false });
  });
});
