import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadEnv } from './env';

const everything = { command: 'node', args: ['server.js', 'stdio'], deny: ['get-env'] };

describe('MCP_SERVERS and EXTERNAL_TOOLS', () => {
  it('reads inline JSON or a file, stdio and Streamable HTTP servers', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'mcp-config-'));
    const file = path.join(directory, 'servers.json');
    writeFileSync(file, JSON.stringify({ everything, remote: { url: 'https://mcp.example.com/mcp', mode: 'async' } }));
    for (const value of [
      file,
      JSON.stringify({ everything, remote: { url: 'https://mcp.example.com/mcp', mode: 'async' } }),
    ]) {
      const env = loadEnv({ MCP_SERVERS: value });
      expect(env.toolSources.mcpServers).toEqual([
        {
          name: 'everything',
          transport: 'stdio',
          command: 'node',
          args: ['server.js', 'stdio'],
          env: {},
          deny: ['get-env'],
          mode: 'inline',
          tools: {},
          allow: undefined,
          timeoutMs: undefined,
        },
        {
          name: 'remote',
          transport: 'http',
          url: 'https://mcp.example.com/mcp',
          headers: {},
          deny: [],
          mode: 'async',
          tools: {},
          allow: undefined,
          timeoutMs: undefined,
        },
      ]);
    }
  });

  it('takes header secrets from named environment variables and lists them as secrets (src/app/logger.test.ts: the log scrubs them)', () => {
    const env = loadEnv({
      MCP_SERVERS: JSON.stringify({
        remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } },
      }),
      REMOTE_TOKEN: 'tok-0123456789abcdef',
    });
    const [remote] = env.toolSources.mcpServers;
    expect(remote?.transport === 'http' && remote.headers).toEqual({ Authorization: 'Bearer tok-0123456789abcdef' });
    expect(env.toolSources.secrets).toEqual(['tok-0123456789abcdef']);
  });

  it('names the variable and the field of a bad configuration', () => {
    expect(() => loadEnv({ MCP_SERVERS: '{"bad name!": {"command": "x"}}' })).toThrow(ConfigError);
    expect(() => loadEnv({ MCP_SERVERS: '{"bad name!": {"command": "x"}}' })).toThrow(/^MCP_SERVERS: bad name!/);
    expect(() =>
      loadEnv({ MCP_SERVERS: '{"s": {"url": "https://x.example/mcp", "headers": {"A": "${MISSING_VAR}"}}}' }),
    ).toThrow('MCP_SERVERS: s.headers.A names the environment variable MISSING_VAR, which is not set');
    expect(() => loadEnv({ MCP_SERVERS: '{"s": {"command": "x", "mode": "sometimes"}}' })).toThrow(
      /^MCP_SERVERS: s.mode/,
    );
    expect(() => loadEnv({ MCP_SERVERS: '/no/such/file.json' })).toThrow(
      /^MCP_SERVERS: cannot read \/no\/such\/file.json/,
    );
    expect(() => loadEnv({ MCP_SERVERS: '{not json' })).toThrow(/^MCP_SERVERS: not valid JSON/);
  });

  describe('the shapes people write', () => {
    const stdio = {
      name: 'everything',
      transport: 'stdio',
      command: 'node',
      args: ['server.js', 'stdio'],
      env: {},
      deny: ['get-env'],
      mode: 'inline',
      tools: {},
      allow: undefined,
      timeoutMs: undefined,
    };
    const http = {
      name: 'remote',
      transport: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: {},
      deny: [],
      mode: 'inline',
      tools: {},
      allow: undefined,
      timeoutMs: undefined,
    };

    it('reads Claude Desktop\'s and Cursor\'s {"mcpServers": {...}} like the plain map', () => {
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-config-')), 'claude_desktop_config.json');
      writeFileSync(
        file,
        JSON.stringify({ mcpServers: { everything, remote: { url: 'https://mcp.example.com/mcp' } } }),
      );
      expect(loadEnv({ MCP_SERVERS: file }).toolSources.mcpServers).toEqual([stdio, http]);
    });

    it('reads VS Code\'s {"servers": {...}} with stdio and http types', () => {
      const config = {
        servers: {
          everything: { type: 'stdio', ...everything },
          remote: { type: 'http', url: 'https://mcp.example.com/mcp' },
        },
      };
      expect(loadEnv({ MCP_SERVERS: JSON.stringify(config) }).toolSources.mcpServers).toEqual([stdio, http]);
    });

    it("reads VS Code's ${env:NAME} like ${NAME}, and refuses its prompted ${input:id} by name", () => {
      const config = (value: string) =>
        JSON.stringify({
          servers: { remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: value } } },
        });
      const [remote] = loadEnv({
        MCP_SERVERS: config('Bearer ${env:REMOTE_TOKEN}'),
        REMOTE_TOKEN: 'tok-0123456789abcdef',
      }).toolSources.mcpServers;
      expect(remote?.transport === 'http' && remote.headers).toEqual({ Authorization: 'Bearer tok-0123456789abcdef' });
      expect(() => loadEnv({ MCP_SERVERS: config('Bearer ${input:github-token}') })).toThrow(
        'MCP_SERVERS: remote.headers.Authorization: ${input:github-token} (a VS Code input) cannot be prompted for here; use ${NAME} with an environment variable',
      );
    });

    it('refuses a transport type it does not speak, naming the server and the type', () => {
      const config = { servers: { legacy: { type: 'sse', url: 'https://mcp.example.com/sse' } } };
      expect(() => loadEnv({ MCP_SERVERS: JSON.stringify(config) })).toThrow(
        'MCP_SERVERS: legacy.type: "sse" is not supported (stdio or http, which is Streamable HTTP)',
      );
      expect(() =>
        loadEnv({
          MCP_SERVERS: JSON.stringify({ mcpServers: { s: { type: 'stdio', url: 'https://x.example/mcp' } } }),
        }),
      ).toThrow(/^MCP_SERVERS: s\.command/);
    });

    it('validates wrapped servers like plain ones', () => {
      expect(() => loadEnv({ MCP_SERVERS: '{"mcpServers": {"bad name!": {"command": "x"}}}' })).toThrow(
        /^MCP_SERVERS: bad name!/,
      );
      expect(() => loadEnv({ MCP_SERVERS: '{"mcpServers": {"s": {"command": "x", "mode": "sometimes"}}}' })).toThrow(
        /^MCP_SERVERS: s.mode/,
      );
      expect(() => loadEnv({ MCP_SERVERS: '{"servers": {"s": {"args": []}}}' })).toThrow(
        'MCP_SERVERS: s: needs a command (stdio) or a url (Streamable HTTP)',
      );
      expect(() =>
        loadEnv({
          MCP_SERVERS: '{"servers": {"s": {"url": "https://x.example/mcp", "headers": {"A": "${MISSING_VAR}"}}}}',
        }),
      ).toThrow('MCP_SERVERS: s.headers.A names the environment variable MISSING_VAR, which is not set');
    });

    it('keeps servers named "servers" or "mcpServers" possible in the plain map', () => {
      expect(loadEnv({ MCP_SERVERS: JSON.stringify({ servers: everything }) }).toolSources.mcpServers).toEqual([
        { ...stdio, name: 'servers' },
      ]);
      const two = loadEnv({
        MCP_SERVERS: JSON.stringify({ mcpServers: everything, remote: { url: 'https://mcp.example.com/mcp' } }),
      }).toolSources.mcpServers;
      expect(two.map((server) => server.name)).toEqual(['mcpServers', 'remote']);
    });

    it("refuses a wrapper beside other keys (VS Code's inputs) instead of reading them as servers", () => {
      const config = { inputs: [{ id: 'token', type: 'promptString' }], servers: { everything } };
      expect(() => loadEnv({ MCP_SERVERS: JSON.stringify(config) })).toThrow(
        /^MCP_SERVERS: "servers" must be the only top-level key \(also found: inputs\)/,
      );
    });

    it('reads an empty wrapper as no servers', () => {
      expect(loadEnv({ MCP_SERVERS: '{"mcpServers": {}}' }).toolSources.mcpServers).toEqual([]);
    });
  });

  it('requires the webhook secret and the public base URL with external tools', () => {
    const tools = JSON.stringify([
      { name: 'render', description: 'Renders a video.', mode: 'external', url: 'https://runner.example/run' },
    ]);
    expect(() => loadEnv({ EXTERNAL_TOOLS: tools })).toThrow(/^TOOL_WEBHOOK_SECRET: required/);
    expect(() => loadEnv({ EXTERNAL_TOOLS: tools, TOOL_WEBHOOK_SECRET: 'w'.repeat(32) })).toThrow(
      /^PUBLIC_BASE_URL: required/,
    );
    const env = loadEnv({
      EXTERNAL_TOOLS: tools,
      TOOL_WEBHOOK_SECRET: 'w'.repeat(32),
      PUBLIC_BASE_URL: 'https://chat.example.com',
    });
    expect(env.toolSources.externalTools[0]).toMatchObject({
      name: 'render',
      mode: 'external',
      parameters: { type: 'object', properties: {} },
    });
    expect(() =>
      loadEnv({
        EXTERNAL_TOOLS: tools.replace('"external"', '"inline"'),
        TOOL_WEBHOOK_SECRET: 'w'.repeat(32),
        PUBLIC_BASE_URL: 'https://chat.example.com',
      }),
    ).toThrow(/^EXTERNAL_TOOLS: 0.mode/);
  });

  it('takes a secret per runner (literal or ${NAME}), scrubbed from logs; TOOL_WEBHOOK_SECRET only for runners without one', () => {
    const own = 'Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz2Xc4Vb6Nm8';
    const tools = JSON.stringify([
      {
        name: 'render',
        description: 'Renders a video.',
        mode: 'external',
        url: 'https://runner.example/run',
        secret: '${RENDER_SECRET}',
      },
      { name: 'print', description: 'Prints.', mode: 'external', url: 'https://printer.example/run', secret: own },
    ]);
    const env = loadEnv({
      EXTERNAL_TOOLS: tools,
      RENDER_SECRET: 'r'.repeat(40),
      PUBLIC_BASE_URL: 'https://chat.example.com',
    });
    expect(env.toolSources.externalTools.map((tool) => tool.secret)).toEqual(['r'.repeat(40), own]);
    expect(env.toolSources.secrets).toEqual(expect.arrayContaining(['r'.repeat(40), own]));
    expect(() => loadEnv({ EXTERNAL_TOOLS: tools, PUBLIC_BASE_URL: 'https://chat.example.com' })).toThrow(
      /^EXTERNAL_TOOLS: 0.secret names the environment variable RENDER_SECRET/,
    );
    expect(() =>
      loadEnv({ EXTERNAL_TOOLS: tools, RENDER_SECRET: 'short', PUBLIC_BASE_URL: 'https://chat.example.com' }),
    ).toThrow(/^EXTERNAL_TOOLS: 0.secret: must be at least 32 characters/);
    // Production holds each runner's secret to the same rules as TOOL_WEBHOOK_SECRET.
    const production = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgresql://chat:pw@db:5432/chat',
      REDIS_URL: 'redis://redis:6379',
      OPENAI_API_KEY: 'sk-test',
      AUTH_SECRET: 'q0L8v2Zr7Xb1Nw5Ty3Mc9Ks4Hd6Jf0Pa2Ue8Gi1',
      ADMIN_TOKEN: 'Wm4Rk8Tz1Yq6Ls3Vn9Bx2Cd7Fh0Jp5Ga8Ej1Ho4',
      METRICS_TOKEN: 'Du7Ic2Ob5Ra9Sf3Tg6Vh0Wj4Xk8Yl1Zm5An2Bo7',
      PUBLIC_BASE_URL: 'https://chat.example.com',
      EXTERNAL_TOOLS: tools,
    };
    expect(() => loadEnv({ ...production, RENDER_SECRET: 'Pl4Ok6Ij8Uh0Yg2Tf4Rd6Es8Wa0Qz3Xs5Cd7Vf9' })).not.toThrow();
    expect(() => loadEnv({ ...production, RENDER_SECRET: 'r'.repeat(40) })).toThrow(
      /^EXTERNAL_TOOLS: 0.secret: a placeholder or non-random value is refused/,
    );
    expect(() => loadEnv({ ...production, RENDER_SECRET: production.AUTH_SECRET })).toThrow(
      /^EXTERNAL_TOOLS: 0.secret: must differ from AUTH_SECRET/,
    );
  });
});
