import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
import { lastUserText, replyWithText, replyWithToolCalls, type StubRequest } from '../support/openai-stub';
import { classifyRequest, lastMessage, responder, textOf, threadHelpers } from './tool-test-kit';

const EVERYTHING = path.resolve(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (last?.role === 'tool') return replyWithText(`Tool said: ${textOf(last)}`);
  const user = lastUserText(request.body);
  if (user === 'echo')
    return replyWithToolCalls([{ name: 'everything__echo', arguments: { message: 'from a Claude Desktop file' } }]);
  if (user === 'add') return replyWithToolCalls([{ name: 'remote__add', arguments: { a: 1, b: 2 } }]);
  return replyWithText(`plain answer to ${user}`);
}

describe('MCP_SERVERS as the {"mcpServers": {...}} file Claude Desktop and Cursor use', () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'mcp-config-file-'));
  const file = path.join(directory, 'claude_desktop_config.json');
  let remote: McpTestServer;

  // Registered before useChatServer's hook, so the file exists when the app reads it.
  beforeAll(async () => {
    remote = await startMcpTestServer();
    writeFileSync(
      file,
      JSON.stringify(
        {
          mcpServers: {
            everything: {
              command: process.execPath,
              args: [EVERYTHING, 'stdio'],
              deny: ['gzip-file-as-resource', 'get-env'],
            },
            remote: { type: 'http', url: remote.url },
          },
        },
        null,
        2,
      ),
    );
  });
  const server = useChatServer({
    stub: { classifyRequest, responder: responder(chat) },
    env: () => ({ MCP_SERVERS: file }),
  });
  afterAll(async () => {
    await remote?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('starts the servers the file names and runs their tools', async () => {
    expect(server.app.application.mcp!.statuses().map((status) => [status.name, status.state])).toEqual([
      ['everything', 'ready'],
      ['remote', 'ready'],
    ]);
    const helpers = await threadHelpers(server.app);
    const thread = await helpers.newThread();
    const echoed = await helpers.send(thread.id, 'echo');
    expect(echoed.messages.map((message) => message.content)).toEqual([
      expect.anything(),
      'Echo: from a Claude Desktop file',
      'Tool said: Echo: from a Claude Desktop file',
    ]);
    const added = await helpers.send(thread.id, 'add');
    expect(added.messages[1]?.content).toBe('1 + 2 = 3');
    expect(remote.calls.get('add')).toBe(1);
  });
});
