/**
 * The one closed list of error codes, shared by REST, sockets and the browser.
 * Parts may add codes here, never a second list.
 */
export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VALIDATION: 400,
  TOO_LARGE: 413,
  BUSY: 409,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  /** A per-user cap (threads per user, ...) is reached: nothing is created until something is removed. */
  QUOTA_EXCEEDED: 409,
  /** The user's spend limit (or their guests' address's) cannot fit the send or call: it resets at `resetsAt`. */
  SPEND_LIMIT_REACHED: 429,
  PROVIDER_ERROR: 502,
  PROVIDER_TIMEOUT: 504,
  CONTEXT_OVERFLOW: 502,
  UNAVAILABLE: 503,
  /** An answer cut off by a server restart (its process died mid-answer) and not run again: the user may retry it. */
  INTERRUPTED: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The error body of every REST response and every failed socket ack. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}
