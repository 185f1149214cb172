import type { ErrorCode } from '../../shared/errors';

/**
 * The one application error. `message` is safe to show to the client; `cause` is logged, never shown.
 * Anything that is not an AppError becomes INTERNAL at the boundary.
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  /** Extra fields a client may use (e.g. retryAfterSeconds for RATE_LIMITED). */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
