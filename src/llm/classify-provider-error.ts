/**
 * Maps whatever ChatOpenAI / the openai SDK / undici throw to one small closed classification the
 * turn pipeline can act on (fold and retry, back off and retry, or give up). Duck-typed on
 * `status`, `code`, `headers`, names and causes, so it does not depend on SDK classes or versions.
 */

export type ProviderErrorKind =
  'context_overflow' | 'rate_limited' | 'server' | 'timeout' | 'network' | 'bad_request' | 'aborted';

export interface ProviderErrorClassification {
  kind: ProviderErrorKind;
  /** Whether the same request may succeed if sent again (after `retryAfterMs` when given). */
  retryable: boolean;
  /** From `retry-after-ms` / `retry-after` (seconds or HTTP date). */
  retryAfterMs?: number;
  /** HTTP status, when the provider answered. */
  status?: number;
  /** Readable, without stack or LangChain's troubleshooting URL. */
  message: string;
}

/** A failed model call: its classification, the original error as `cause`, and the text streamed before it failed. */
export class ModelCallError extends Error implements ProviderErrorClassification {
  override readonly name = 'ModelCallError';
  readonly kind: ProviderErrorKind;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly status?: number;
  readonly partialText: string;

  constructor(options: { classification: ProviderErrorClassification; cause: unknown; partialText?: string }) {
    super(options.classification.message, { cause: options.cause });
    this.kind = options.classification.kind;
    this.retryable = options.classification.retryable;
    if (options.classification.retryAfterMs !== undefined) this.retryAfterMs = options.classification.retryAfterMs;
    if (options.classification.status !== undefined) this.status = options.classification.status;
    this.partialText = options.partialText ?? '';
  }
}

type ErrorLike = {
  name?: unknown;
  message?: unknown;
  status?: unknown;
  code?: unknown;
  headers?: unknown;
  cause?: unknown;
  error?: unknown;
  lc_error_code?: unknown;
};

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);
const NETWORK_MESSAGES =
  /terminated|other side closed|socket hang up|fetch failed|premature close|connection error|network error|stream ended before/i;
const CONTEXT_OVERFLOW_MESSAGES =
  /context_length_exceeded|maximum context length|exceeds the context window|Input tokens exceed the configured limit|prompt is too long/i;
/** Anthropic's error types (`{type: "error", error: {type, message}}`), also sent mid-stream as an `error` event. */
const ANTHROPIC_RETRYABLE_TYPES: Readonly<Record<string, ProviderErrorKind>> = {
  overloaded_error: 'server',
  api_error: 'server',
  rate_limit_error: 'rate_limited',
  timeout_error: 'timeout',
};

/** The error and its causes, outermost first (bounded, cycle-safe). */
function causeChain(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current: unknown = error;
  while (typeof current === 'object' && current !== null && chain.length < 6 && !chain.includes(current as ErrorLike)) {
    chain.push(current as ErrorLike);
    current = (current as ErrorLike).cause;
  }
  return chain;
}

function constructorName(error: ErrorLike): string {
  return (error as { constructor?: { name?: string } }).constructor?.name ?? '';
}

function cleanMessage(error: unknown): string {
  const raw =
    typeof error === 'object' && error !== null && typeof (error as ErrorLike).message === 'string'
      ? ((error as ErrorLike).message as string)
      : String(error);
  return raw.split('\n\nTroubleshooting URL:')[0]!.trim() || 'Unknown model provider error';
}

function headerValue(headers: unknown, name: string): string | null {
  if (!headers || typeof headers !== 'object') return null;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : null;
}

/** `retry-after-ms`, else `retry-after` as seconds or an HTTP date; undefined when absent or invalid. */
export function parseRetryAfterMs(headers: unknown, now: number = Date.now()): number | undefined {
  const milliseconds = Number(headerValue(headers, 'retry-after-ms'));
  if (headerValue(headers, 'retry-after-ms') !== null && Number.isFinite(milliseconds) && milliseconds >= 0)
    return milliseconds;
  const value = headerValue(headers, 'retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The `error.type` of an Anthropic error body (the SDK keeps the body as `error`). */
function anthropicErrorType(chain: ErrorLike[]): string | null {
  for (const error of chain) {
    const body = error.error as { type?: unknown; error?: { type?: unknown } } | undefined;
    const type = body?.error?.type ?? (body?.type !== 'error' ? body?.type : undefined);
    if (typeof type === 'string') return type;
  }
  return null;
}

function findStatus(chain: ErrorLike[]): { status: number; error: ErrorLike } | null {
  for (const error of chain) if (typeof error.status === 'number') return { status: error.status, error };
  return null;
}

function isAbort(chain: ErrorLike[]): boolean {
  return chain.some(
    (error) =>
      error.name === 'AbortError' ||
      error.name === 'ModelAbortError' ||
      constructorName(error) === 'APIUserAbortError' ||
      error.lc_error_code === 'MODEL_ABORTED',
  );
}

function isContextOverflow(chain: ErrorLike[]): boolean {
  return chain.some(
    (error) =>
      error.name === 'ContextOverflowError' ||
      error.code === 'context_length_exceeded' ||
      (typeof error.message === 'string' && CONTEXT_OVERFLOW_MESSAGES.test(error.message)),
  );
}

function isTimeout(chain: ErrorLike[]): boolean {
  return chain.some(
    (error) =>
      error.name === 'TimeoutError' ||
      constructorName(error) === 'APIConnectionTimeoutError' ||
      error.code === 'ETIMEDOUT' ||
      error.code === 'UND_ERR_HEADERS_TIMEOUT' ||
      error.code === 'UND_ERR_BODY_TIMEOUT' ||
      (typeof error.message === 'string' && /timed out|timeout/i.test(error.message)),
  );
}

function isNetwork(chain: ErrorLike[]): boolean {
  return chain.some(
    (error) =>
      constructorName(error) === 'APIConnectionError' ||
      (typeof error.code === 'string' && (NETWORK_CODES.has(error.code) || error.code.startsWith('UND_ERR'))) ||
      (typeof error.message === 'string' && NETWORK_MESSAGES.test(error.message)),
  );
}

function classifyStatus(status: number, error: ErrorLike, message: string): ProviderErrorClassification {
  if (status === 429) {
    // OpenAI answers 429 for an exhausted quota too; waiting does not help there.
    const quota =
      error.code === 'insufficient_quota' || /insufficient_quota|exceeded your current quota/i.test(message);
    const retryAfterMs = parseRetryAfterMs(error.headers);
    return {
      kind: 'rate_limited',
      retryable: !quota,
      status,
      message,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    };
  }
  if (status === 408) return { kind: 'timeout', retryable: true, status, message };
  if (status === 409 || status >= 500) return { kind: 'server', retryable: true, status, message };
  return { kind: 'bad_request', retryable: false, status, message };
}

/**
 * Classifies a model call failure. Pass the call's `signal`: when it has fired, the failure is
 * `aborted` whatever the error looks like (the caller cancelled or timed the turn out itself).
 * Unknown errors are `server`, not retryable.
 */
export function classifyProviderError(
  error: unknown,
  options: { signal?: AbortSignal } = {},
): ProviderErrorClassification {
  if (error instanceof ModelCallError) {
    const { kind, retryable, retryAfterMs, status, message } = error;
    return {
      kind,
      retryable,
      message,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
      ...(status !== undefined && { status }),
    };
  }
  const chain = causeChain(error);
  const message = cleanMessage(error);
  if (options.signal?.aborted || isAbort(chain)) return { kind: 'aborted', retryable: false, message };
  const withStatus = findStatus(chain);
  if (isContextOverflow(chain)) {
    return { kind: 'context_overflow', retryable: false, message, ...(withStatus && { status: withStatus.status }) };
  }
  if (withStatus) return classifyStatus(withStatus.status, withStatus.error, message);
  // An error event inside an Anthropic stream has a body but no status (the answer had started as 200).
  const anthropicKind = ANTHROPIC_RETRYABLE_TYPES[anthropicErrorType(chain) ?? ''];
  if (anthropicKind) return { kind: anthropicKind, retryable: true, message };
  if (isTimeout(chain)) return { kind: 'timeout', retryable: true, message };
  if (isNetwork(chain)) return { kind: 'network', retryable: true, message };
  return { kind: 'server', retryable: false, message };
}
