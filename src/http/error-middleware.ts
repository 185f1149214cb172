import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ERROR_STATUS, type ErrorBody } from '../shared/errors';
import { AppError } from '../core/errors/app-error';
import { toAppError } from '../errors/to-app-error';
import type { LogPort } from '../core/ports';

/** Maps any error to `{ error: { code, message } }` with the code's status. Unknown errors become INTERNAL, logged with their stack. */
export function errorMiddleware(log: LogPort): ErrorRequestHandler {
  return (error: unknown, _request, response, _next) => {
    const appError = toAppError(error);
    if (appError.code === 'UNAVAILABLE')
      log.warn({ err: appError.cause, requestId: response.locals.requestId }, 'database unavailable');
    if (appError.code === 'INTERNAL') log.error({ err: error, requestId: response.locals.requestId }, 'request failed');
    const retryAfter = appError.details?.retryAfterSeconds;
    if (typeof retryAfter === 'number') response.setHeader('Retry-After', String(Math.ceil(retryAfter)));
    const body: { error: ErrorBody & Record<string, unknown> } = {
      error: { code: appError.code, message: appError.message, ...appError.details },
    };
    response.status(ERROR_STATUS[appError.code]).json(body);
  };
}

export const notFoundHandler: RequestHandler = (_request, _response, next) => {
  next(new AppError('NOT_FOUND', 'No such route.'));
};
