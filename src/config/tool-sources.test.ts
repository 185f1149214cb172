import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { secretsOfEnv } from '../app/logger';
import { ConfigError, loadEnv } from './env';

const everything = { command: 'node', args: ['server.js', 'stdio'], deny: ['get-env'] };

describe('MCP_SERVERS and EXTERNAL_TOOLS', () => {
  it('reads inline JSON or a file, stdio and Streamable HTTP servers', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'mcp-config-'));
    const file = path.join(directory, 'servers.json');
    writeFileSync(file, JSON.stringify({ everything, remote: { url: 'https://mcp.example.com/mcp', mode: 'async' } }));
    for (const value of [file, JSON.stringify({ everything, remote: { url: 'https://mcp.example.com/mcp', mode: 'async' } })]) {
      const env = loadEnv({ MCP_SERVERS: value });
      expect(env.toolSources.mcpServers).toEqual([
        { name: 'everything', transport: 'stdio', command: 'node', args: ['server.js', 'stdio'], env: {}, deny: ['get-env'], mode: 'inline', tools: {}, allow: undefined, timeoutMs: undefined },
        { name: 'remote', transport: 'http', url: 'https://mcp.example.com/mcp', headers: {}, deny: [], mode: 'async', tools: {}, allow: undefined, timeoutMs: undefined },
      ]);
    }
  });

  it('takes header secrets from named environment variables and adds them to the log scrub list', () => {
    const env = loadEnv({ MCP_SERVERS: JSON.stringify({ remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } } }), REMOTE_TOKEN: 'tok-0123456789abcdef' });
    const [remote] = env.toolSources.mcpServers;
    expect(remote?.transport === 'http' && remote.headers).toEqual({ Authorization: 'Bearer tok-0123456789abcdef' });
    expect(secretsOfEnv(env).scrub('{"headers":{"x":"Bearer tok-0123456789abcdef"}}')).toBe('{"headers":{"x":"Bearer [redacted]"}}');
  });

  it('names the variable and the field of a bad configuration', () => {
    expect(() => loadEnv({ MCP_SERVERS: '{"bad name!": {"command": "x"}}' })).toThrow(ConfigError);
    expect(() => loadEnv({ MCP_SERVERS: '{"bad name!": {"command": "x"}}' })).toThrow(/^MCP_SERVERS: bad name!/);
    expect(() => loadEnv({ MCP_SERVERS: '{"s": {"url": "https://x.example/mcp", "headers": {"A": "${MISSING_VAR}"}}}' })).toThrow('MCP_SERVERS: s.headers.A names the environment variable MISSING_VAR, which is not set');
    expect(() => loadEnv({ MCP_SERVERS: '{"s": {"command": "x", "mode": "sometimes"}}' })).toThrow(/^MCP_SERVERS: s.mode/);
    expect(() => loadEnv({ MCP_SERVERS: '/no/such/file.json' })).toThrow(/^MCP_SERVERS: cannot read \/no\/such\/file.json/);
    expect(() => loadEnv({ MCP_SERVERS: '{not json' })).toThrow(/^MCP_SERVERS: not valid JSON/);
  });

  it('requires the webhook secret and the public base URL with external tools', () => {
    const tools = JSON.stringify([{ name: 'render', description: 'Renders a video.', mode: 'external', url: 'https://runner.example/run' }]);
    expect(() => loadEnv({ EXTERNAL_TOOLS: tools })).toThrow(/^TOOL_WEBHOOK_SECRET: required/);
    expect(() => loadEnv({ EXTERNAL_TOOLS: tools, TOOL_WEBHOOK_SECRET: 'w'.repeat(32) })).toThrow(/^PUBLIC_BASE_URL: required/);
    const env = loadEnv({ EXTERNAL_TOOLS: tools, TOOL_WEBHOOK_SECRET: 'w'.repeat(32), PUBLIC_BASE_URL: 'https://chat.example.com' });
    expect(env.toolSources.externalTools[0]).toMatchObject({ name: 'render', mode: 'external', parameters: { type: 'object', properties: {} } });
    expect(() => loadEnv({ EXTERNAL_TOOLS: tools.replace('"external"', '"inline"'), TOOL_WEBHOOK_SECRET: 'w'.repeat(32), PUBLIC_BASE_URL: 'https://chat.example.com' })).toThrow(/^EXTERNAL_TOOLS: 0.mode/);
  });
});
