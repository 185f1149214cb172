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

  it('takes a secret per runner (literal or ${NAME}), scrubbed from logs; TOOL_WEBHOOK_SECRET only for runners without one', () => {
    const own = 'Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz2Xc4Vb6Nm8';
    const tools = JSON.stringify([
      { name: 'render', description: 'Renders a video.', mode: 'external', url: 'https://runner.example/run', secret: '${RENDER_SECRET}' },
      { name: 'print', description: 'Prints.', mode: 'external', url: 'https://printer.example/run', secret: own },
    ]);
    const env = loadEnv({ EXTERNAL_TOOLS: tools, RENDER_SECRET: 'r'.repeat(40), PUBLIC_BASE_URL: 'https://chat.example.com' });
    expect(env.toolSources.externalTools.map((tool) => tool.secret)).toEqual(['r'.repeat(40), own]);
    expect(env.toolSources.secrets).toEqual(expect.arrayContaining(['r'.repeat(40), own]));
    expect(() => loadEnv({ EXTERNAL_TOOLS: tools, PUBLIC_BASE_URL: 'https://chat.example.com' })).toThrow(/^EXTERNAL_TOOLS: 0.secret names the environment variable RENDER_SECRET/);
    expect(() => loadEnv({ EXTERNAL_TOOLS: tools, RENDER_SECRET: 'short', PUBLIC_BASE_URL: 'https://chat.example.com' })).toThrow(/^EXTERNAL_TOOLS: 0.secret: must be at least 32 characters/);
    // Production holds each runner's secret to the same rules as TOOL_WEBHOOK_SECRET.
    const production = {
      NODE_ENV: 'production', DATABASE_URL: 'postgresql://chat:pw@db:5432/chat', REDIS_URL: 'redis://redis:6379', OPENAI_API_KEY: 'sk-test',
      AUTH_SECRET: 'q0L8v2Zr7Xb1Nw5Ty3Mc9Ks4Hd6Jf0Pa2Ue8Gi1', ADMIN_TOKEN: 'Wm4Rk8Tz1Yq6Ls3Vn9Bx2Cd7Fh0Jp5Ga8Ej1Ho4', METRICS_TOKEN: 'Du7Ic2Ob5Ra9Sf3Tg6Vh0Wj4Xk8Yl1Zm5An2Bo7',
      PUBLIC_BASE_URL: 'https://chat.example.com', EXTERNAL_TOOLS: tools,
    };
    expect(() => loadEnv({ ...production, RENDER_SECRET: 'Pl4Ok6Ij8Uh0Yg2Tf4Rd6Es8Wa0Qz3Xs5Cd7Vf9' })).not.toThrow();
    expect(() => loadEnv({ ...production, RENDER_SECRET: 'r'.repeat(40) })).toThrow(/^EXTERNAL_TOOLS: 0.secret: a placeholder or non-random value is refused/);
    expect(() => loadEnv({ ...production, RENDER_SECRET: production.AUTH_SECRET })).toThrow(/^EXTERNAL_TOOLS: 0.secret: must differ from AUTH_SECRET/);
  });
});
