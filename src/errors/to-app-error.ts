import { AppError, isAppError } from '../core/errors/app-error';
import { isDatabaseUnavailable } from './database-errors';

/**
 * Any error as one of our codes: AppErrors as they are; what body-parser and friends throw; an unreachable database
 * as a retryable UNAVAILABLE; anything else INTERNAL (with the error as its cause, to be logged, never shown).
 * REST, the SSE stream of a turn and socket acks all map errors with it.
 */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const status = (error as { status?: number; type?: string })?.status;
  const type = (error as { type?: string })?.type;
  if (status === 413 || type === 'entity.too.large') return new AppError('TOO_LARGE', 'The request body is too large.');
  if (type === 'entity.parse.failed') return new AppError('VALIDATION', 'The request body is not valid JSON.');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return new AppError('VALIDATION', 'The request body must be UTF-8 JSON.');
  if (status === 400) return new AppError('VALIDATION', 'The request is malformed.');
  if (isDatabaseUnavailable(error)) {
    return new AppError(
      'UNAVAILABLE',
      'The database is unavailable right now; nothing was half-written. Try again in a moment.',
      { cause: error, details: { retryAfterSeconds: 2 } },
    );
  }
  return new AppError('INTERNAL', 'Something went wrong on our side.', { cause: error });
}
