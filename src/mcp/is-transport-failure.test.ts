import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { isTransportFailure } from './is-transport-failure';

/** The error the SDK's client rejects a call with when a server's answer fails its result schema. */
function resultSchemaError(): unknown {
  const parsed = CallToolResultSchema.safeParse({ content: [{ type: 'no-such-type', value: 42 }] });
  if (parsed.success) throw new Error('expected the schema check to fail');
  return parsed.error;
}

describe('isTransportFailure', () => {
  it('does not count a result that fails the schema check, an MCP error answer, a timeout or an abort', () => {
    expect(isTransportFailure(resultSchemaError())).toBe(false);
    expect(isTransportFailure(new McpError(ErrorCode.InvalidParams, 'Invalid arguments'))).toBe(false);
    expect(isTransportFailure(new McpError(ErrorCode.RequestTimeout, 'Request timed out'))).toBe(false);
    expect(isTransportFailure(Object.assign(new Error('aborted'), { name: 'AbortError' }))).toBe(false);
    expect(isTransportFailure(new TypeError("Cannot read properties of undefined (reading 'text')"))).toBe(false);
    expect(isTransportFailure('a string')).toBe(false);
  });

  it('counts a closed, refused or reset connection and an HTTP transport error', () => {
    expect(isTransportFailure(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'))).toBe(true);
    expect(
      isTransportFailure(
        new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
        }),
      ),
    ).toBe(true);
    expect(isTransportFailure(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isTransportFailure(new Error('Not connected'))).toBe(true);
    expect(
      isTransportFailure(
        Object.assign(new Error('Error POSTing to endpoint (HTTP 404): Session not found'), {
          name: 'StreamableHTTPError',
        }),
      ),
    ).toBe(true);
  });
});
