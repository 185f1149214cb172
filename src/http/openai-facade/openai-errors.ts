import type { ErrorRequestHandler, Response } from 'express';
import type { LogPort } from '../../core/ports';
import type { AppError } from '../../core/errors/app-error';
import type { ErrorCode } from '../../shared/errors';
import { toAppError } from '../../errors/to-app-error';

/** An error in OpenAI's shape, as its SDKs read it. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** Our codes as OpenAI's status, type and code (BUSY, the per-thread queue bound, is a retryable 429 here). */
const OPENAI_ERRORS: Record<ErrorCode, { status: number; type: string; code: string | null }> = {
  VALIDATION: { status: 400, type: 'invalid_request_error', code: null },
  UNAUTHORIZED: { status: 401, type: 'invalid_request_error', code: 'invalid_api_key' },
  FORBIDDEN: { status: 403, type: 'invalid_request_error', code: 'forbidden' },
  NOT_FOUND: { status: 404, type: 'invalid_request_error', code: 'not_found' },
  TOO_LARGE: { status: 413, type: 'invalid_request_error', code: 'request_too_large' },
  BUSY: { status: 429, type: 'rate_limit_exceeded', code: 'busy' },
  RATE_LIMITED: { status: 429, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' },
  CONFLICT: { status: 409, type: 'invalid_request_error', code: 'conflict' },
  QUOTA_EXCEEDED: { status: 409, type: 'invalid_request_error', code: 'quota_exceeded' },
  // OpenAI's own answer to a spent balance: its SDKs do not retry it (x-should-retry: false, see sendOpenAIError).
  SPEND_LIMIT_REACHED: { status: 429, type: 'insufficient_quota', code: 'insufficient_quota' },
  PROVIDER_ERROR: { status: 502, type: 'api_error', code: 'upstream_error' },
  CONTEXT_OVERFLOW: { status: 502, type: 'api_error', code: 'context_length_exceeded' },
  PROVIDER_TIMEOUT: { status: 504, type: 'api_error', code: 'upstream_timeout' },
  UNAVAILABLE: { status: 503, type: 'api_error', code: 'unavailable' },
  INTERRUPTED: { status: 503, type: 'api_error', code: 'interrupted' },
  INTERNAL: { status: 500, type: 'server_error', code: null },
};

/** Seconds a client waits before retrying BUSY (a turn of the conversation is still queued). */
const BUSY_RETRY_SECONDS = 1;

/** A model this server does not serve. */
export const MODEL_NOT_FOUND = 'model_not_found';

/** The OpenAI body and status of an error (and its Retry-After, when it has one). */
export function toOpenAIError(
  error: AppError,
  code?: string,
): { status: number; body: OpenAIErrorBody; retryAfterSeconds: number | null } {
  const mapped = OPENAI_ERRORS[error.code];
  const field = error.details?.field;
  const retryAfter = error.details?.retryAfterSeconds;
  return {
    status: mapped.status,
    body: {
      error: {
        message: error.message,
        type: mapped.type,
        param: typeof field === 'string' ? field : null,
        code: code ?? (error.details?.openaiCode as string | undefined) ?? mapped.code,
      },
    },
    retryAfterSeconds:
      typeof retryAfter === 'number' ? Math.ceil(retryAfter) : error.code === 'BUSY' ? BUSY_RETRY_SECONDS : null,
  };
}

/** A front door's error as its clients read it: status, body, and the seconds to wait before retrying it. */
export interface ShapedError {
  status: number;
  body: unknown;
  retryAfterSeconds: number | null;
}

/** Writes a front door's error (the response must not have started): its Retry-After, then the body. */
export function sendShapedError(response: Response, appError: AppError, shaped: ShapedError): void {
  if (shaped.retryAfterSeconds !== null) response.setHeader('Retry-After', String(shaped.retryAfterSeconds));
  // A spent limit lasts until its reset, hours away: OpenAI's and Anthropic's SDKs would otherwise retry a 429 at once.
  if (appError.code === 'SPEND_LIMIT_REACHED') response.setHeader('x-should-retry', 'false');
  response.status(shaped.status).json(shaped.body);
}

/** Writes an error as OpenAI does (the response must not have started). */
export function sendOpenAIError(response: Response, appError: AppError): void {
  sendShapedError(response, appError, toOpenAIError(appError));
}

/**
 * A front door's error handler: every failure in its clients' shape (`send`), INTERNAL ones logged as `failure`.
 * A failure once the response started (a stream) is the stream's to tell.
 */
export function frontDoorErrorHandler(
  log: LogPort,
  failure: string,
  send: (response: Response, appError: AppError) => void,
): ErrorRequestHandler {
  return (error: unknown, _request, response, next) => {
    if (response.headersSent) {
      next(error);
      return;
    }
    const appError = toAppError(error);
    if (appError.code === 'INTERNAL') log.error({ err: error, requestId: response.locals.requestId }, failure);
    send(response, appError);
  };
}

/** The /v1 routes' error handler: every failure in OpenAI's shape (the rest of the API keeps ours). */
export function openAIErrorHandler(log: LogPort): ErrorRequestHandler {
  return frontDoorErrorHandler(log, 'OpenAI-compatible request failed', sendOpenAIError);
}
