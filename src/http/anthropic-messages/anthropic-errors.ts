import type { ErrorRequestHandler, Response } from 'express';
import type { AppError } from '../../core/errors/app-error';
import type { LogPort } from '../../core/ports';
import type { ErrorCode } from '../../shared/errors';
import { frontDoorErrorHandler, sendShapedError, toOpenAIError } from '../openai-facade/openai-errors';

/** An error in Anthropic's shape, as its SDKs read it. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id: string | null;
}

/**
 * Our codes as Anthropic's status and error type. A spent balance is Anthropic's 429 too; the shutdown's refusal is
 * its `overloaded_error` (529), which its SDKs retry.
 */
const ANTHROPIC_ERRORS: Record<ErrorCode, { status: number; type: string }> = {
  VALIDATION: { status: 400, type: 'invalid_request_error' },
  UNAUTHORIZED: { status: 401, type: 'authentication_error' },
  FORBIDDEN: { status: 403, type: 'permission_error' },
  NOT_FOUND: { status: 404, type: 'not_found_error' },
  TOO_LARGE: { status: 413, type: 'request_too_large' },
  BUSY: { status: 429, type: 'rate_limit_error' },
  RATE_LIMITED: { status: 429, type: 'rate_limit_error' },
  CONFLICT: { status: 409, type: 'invalid_request_error' },
  QUOTA_EXCEEDED: { status: 409, type: 'invalid_request_error' },
  SPEND_LIMIT_REACHED: { status: 429, type: 'rate_limit_error' },
  PROVIDER_ERROR: { status: 502, type: 'api_error' },
  CONTEXT_OVERFLOW: { status: 502, type: 'api_error' },
  PROVIDER_TIMEOUT: { status: 504, type: 'timeout_error' },
  UNAVAILABLE: { status: 529, type: 'overloaded_error' },
  INTERRUPTED: { status: 500, type: 'api_error' },
  INTERNAL: { status: 500, type: 'api_error' },
};

/** The Anthropic body and status of an error (its Retry-After as the OpenAI routes compute it). */
export function toAnthropicError(
  error: AppError,
  requestId: string | null,
): { status: number; body: AnthropicErrorBody; retryAfterSeconds: number | null } {
  const mapped = ANTHROPIC_ERRORS[error.code];
  return {
    status: mapped.status,
    body: { type: 'error', error: { type: mapped.type, message: error.message }, request_id: requestId },
    retryAfterSeconds: toOpenAIError(error).retryAfterSeconds,
  };
}

/** The request's id (X-Request-Id), as Anthropic's bodies and `request-id` header carry it. */
export function requestIdOf(response: Response): string | null {
  return typeof response.locals.requestId === 'string' ? response.locals.requestId : null;
}

/** Writes an error as Anthropic does (the response must not have started). */
export function sendAnthropicError(response: Response, appError: AppError): void {
  sendShapedError(response, appError, toAnthropicError(appError, requestIdOf(response)));
}

/** The /v1/messages routes' error handler: every failure in Anthropic's shape (parse errors and auth included). */
export function anthropicErrorHandler(log: LogPort): ErrorRequestHandler {
  return frontDoorErrorHandler(log, 'Anthropic Messages request failed', sendAnthropicError);
}
