import { describe, expect, it } from 'vitest';
import { loadEnv } from '../config/env';
import { secretsOfEnv } from './logger';

describe('secretsOfEnv', () => {
  it('scrubs the MCP header values taken from environment variables from log lines', () => {
    const env = loadEnv({
      MCP_SERVERS: JSON.stringify({
        remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } },
      }),
      REMOTE_TOKEN: 'tok-0123456789abcdef',
    });
    expect(secretsOfEnv(env).scrub('{"headers":{"x":"Bearer tok-0123456789abcdef"}}')).toBe(
      '{"headers":{"x":"Bearer [redacted]"}}',
    );
  });

  it('scrubs the OPENAI_FACADE_KEYS service keys from log lines', () => {
    const env = loadEnv({
      OPENAI_FACADE_KEYS: 'svc-key-one-0123456789abcdefghijklmn, svc-key-two-0123456789abcdefghijklmn',
    });
    expect(
      secretsOfEnv(env).scrub(
        '{"authorization":"Bearer svc-key-one-0123456789abcdefghijklmn","k":"svc-key-two-0123456789abcdefghijklmn"}',
      ),
    ).toBe('{"authorization":"Bearer [redacted]","k":"[redacted]"}');
  });

  it('scrubs ANTHROPIC_API_KEY from log lines', () => {
    const env = loadEnv({ ANTHROPIC_API_KEY: 'sk-ant-api03-0123456789abcdefghij' });
    expect(secretsOfEnv(env).scrub('{"x-api-key":"sk-ant-api03-0123456789abcdefghij"}')).toBe(
      '{"x-api-key":"[redacted]"}',
    );
  });
});
