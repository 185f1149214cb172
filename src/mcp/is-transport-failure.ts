import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** System error codes of a connection that is gone (as opposed to a slow or refusing server). */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'ERR_STREAM_DESTROYED',
]);
const CONNECTION_MESSAGE = /fetch failed|socket hang up|not connected|connection closed|other side closed/i;

/**
 * True only for failures of the connection itself (the server is gone: closed, refused, reset, an HTTP transport
 * error), which restart the server and fail every call in flight on it. Anything else stays one call's error: an MCP
 * error answer, a timeout, an abort, and a result that fails the SDK's schema check (a ZodError), which used to
 * count as a transport failure and restart the server for everyone.
 */
export function isTransportFailure(error: unknown): boolean {
  if (error instanceof McpError) return error.code === (ErrorCode.ConnectionClosed as number);
  if (!(error instanceof Error) || error.name === 'AbortError' || /timed out|timeout/i.test(error.message))
    return false;
  if (error.name === 'StreamableHTTPError') return true;
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    if (CONNECTION_MESSAGE.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}
