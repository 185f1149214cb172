/** How a model call failed, as the chat-model adapter classifies the provider's error. */
export type ModelCallErrorKind =
  'context_overflow' | 'rate_limited' | 'server' | 'timeout' | 'network' | 'bad_request' | 'aborted';

/** Thrown by ChatModelPort / SummarizerPort implementations. */
export class ModelCallError extends Error {
  override name = 'ModelCallError';
  readonly kind: ModelCallErrorKind;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(options: {
    kind: ModelCallErrorKind;
    message: string;
    retryable: boolean;
    retryAfterMs?: number;
    cause?: unknown;
  }) {
    super(options.message, { cause: options.cause });
    this.kind = options.kind;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export function isModelCallError(error: unknown): error is ModelCallError {
  return error instanceof ModelCallError;
}
