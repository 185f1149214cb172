import { isErrorCode, type ErrorBody, type ErrorCode } from '../../../src/shared/errors';

/** An error answered by the server (REST body or socket ack), or a network failure (`UNAVAILABLE`, status 0). */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfterSeconds: number | null;

  constructor(body: ErrorBody, status = 0, retryAfterSeconds: number | null = null) {
    super(body.message);
    this.code = body.code;
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  static from(error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new ApiError({ code: 'UNAVAILABLE', message: `The server cannot be reached (${message}).` });
  }
}

/** Reads an error body defensively: anything that is not `{ error: { code, message } }` becomes INTERNAL. */
export function errorBodyOf(value: unknown, fallback: string): ErrorBody {
  const candidate = (value as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (candidate && isErrorCode(candidate.code) && typeof candidate.message === 'string')
    return { code: candidate.code, message: candidate.message };
  return { code: 'INTERNAL', message: fallback };
}
