import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ERROR_STATUS, type ErrorBody } from '../shared/errors';
import { AppError, isAppError } from '../core/errors';
import type { Logger } from '../app/logger';
import { isDatabaseUnavailable } from '../db/database-errors';

/** Maps any error to `{ error: { code, message } }` with the code's status. Unknown errors become INTERNAL, logged with their stack. */
export function errorMiddleware(log: Logger): ErrorRequestHandler {
  return (error: unknown, _request, response, _next) => {
    const appError = toAppError(error);
    if (appError.code === 'UNAVAILABLE') log.warn({ err: appError.cause, requestId: response.locals.requestId }, 'database unavailable');
    if (appError.code === 'INTERNAL') log.error({ err: error, requestId: response.locals.requestId }, 'request failed');
    const retryAfter = appError.details?.retryAfterSeconds;
    if (typeof retryAfter === 'number') response.setHeader('Retry-After', String(Math.ceil(retryAfter)));
    const body: { error: ErrorBody & Record<string, unknown> } = { error: { code: appError.code, message: appError.message, ...appError.details } };
    response.status(ERROR_STATUS[appError.code]).json(body);
  };
}

/** What body-parser and friends throw, turned into our codes. */
function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const status = (error as { status?: number; type?: string })?.status;
  const type = (error as { type?: string })?.type;
  if (status === 413 || type === 'entity.too.large') return new AppError('TOO_LARGE', 'The request body is too large.');
  if (type === 'entity.parse.failed') return new AppError('VALIDATION', 'The request body is not valid JSON.');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new AppError('VALIDATION', 'The request body must be UTF-8 JSON.');
  if (status === 400) return new AppError('VALIDATION', 'The request is malformed.');
  if (isDatabaseUnavailable(error)) {
    return new AppError('UNAVAILABLE', 'The database is unavailable right now; nothing was half-written. Try again in a moment.', { cause: error, details: { retryAfterSeconds: 2 } });
  }
  return new AppError('INTERNAL', 'Something went wrong on our side.', { cause: error });
}

export const notFoundHandler: RequestHandler = (_request, _response, next) => {
  next(new AppError('NOT_FOUND', 'No such route.'));
};
