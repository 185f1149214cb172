import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ToolRunDto } from '../../src/shared/api';
import type { AdminToolListDto } from '../../src/shared/admin-api';
import {
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
  type StubRequest,
} from '../support/openai-stub';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  assertRequestsValid,
  classifyRequest,
  lastMessage,
  responder,
  textOf,
  threadHelpers,
  isServerNote,
  serverNoteText,
  type ThreadHelpers,
} from './tool-test-kit';

const EVERYTHING = path.resolve(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

/** server-everything over stdio, as the README's example, with its network and environment tools denied. */
function everythingServers(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    everything: {
      command: process.execPath,
      args: [EVERYTHING, 'stdio'],
      deny: ['gzip-file-as-resource', 'get-env'],
      tools: { 'trigger-long-running-operation': { mode: 'async' } },
    },
    ...extra,
  });
}

const offeredNames = (request: StubRequest) => (request.body.tools ?? []).map((tool) => tool.function.name);
const isFollowUp = (request: StubRequest) => request.kind === 'chat' && isServerNote(lastMessage(request));
const runIdOf = (content: string | undefined) => /as run ([0-9a-f-]{36})/.exec(content ?? '')?.[1] ?? '';

function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (isServerNote(last)) return replyWithText('The long operation has finished.');
  if (last?.role === 'tool') return replyWithText(`Tool said: ${textOf(last)}`);
  const user = lastUserText(request.body);
  if (user === 'echo')
    return replyWithToolCalls([{ name: 'everything__echo', arguments: { message: 'hello from the model' } }]);
  if (user === 'echo badly')
    return replyWithToolCalls([{ name: 'everything__echo', arguments: { text: 'wrong field' } }]);
  if (user === 'links')
    return replyWithToolCalls([{ name: 'everything__get-resource-links', arguments: { count: 2 } }]);
  if (user === 'weather')
    return replyWithToolCalls([{ name: 'everything__get-structured-content', arguments: { location: 'Chicago' } }]);
  if (user === 'long')
    return replyWithToolCalls([
      { name: 'everything__trigger-long-running-operation', arguments: { duration: 2, steps: 4 } },
    ]);
  if (user === 'add') return replyWithToolCalls([{ name: 'remote__add', arguments: { a: 2, b: 40 } }]);
  if (user === 'malformed') return replyWithToolCalls([{ name: 'remote__malformed', arguments: {} }]);
  if (user === 'new tool') return replyWithToolCalls([{ name: 'remote__fresh_tool', arguments: {} }]);
  return replyWithText(`plain answer to ${user}`);
}

describe('MCP tools (server-everything over stdio, the SDK test server over Streamable HTTP)', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;
  let remote: McpTestServer;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: responder(chat) });
    remote = await startMcpTestServer({ requireToken: 'remote-secret-token-123' });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        MCP_TEST_TOKEN: 'remote-secret-token-123',
        MCP_SERVERS: everythingServers({
          remote: { url: remote.url, headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' } },
        }),
      },
      tuning: { toolCancelPollMs: 100, mcpBackoffMs: 200 },
    });
    helpers = await threadHelpers(app);
  });
  beforeEach(() => stub.reset());
  afterAll(async () => {
    await app?.stop();
    await remote?.close();
    await stub?.close();
  });

  it("offers the servers' tools as <server>__<tool>, without the denied ones", async () => {
    const thread = await helpers.newThread();
    await helpers.send(thread.id, 'hi');
    const offered = offeredNames(stub.requests.find((request) => request.kind === 'chat')!);
    expect(offered).toEqual(
      expect.arrayContaining([
        'calculator',
        'everything__echo',
        'everything__get-sum',
        'everything__trigger-long-running-operation',
        'remote__add',
        'remote__slow_job',
      ]),
    );
    expect(offered).not.toContain('everything__gzip-file-as-resource');
    expect(offered).not.toContain('everything__get-env');
    // The header secret came from the environment variable.
    expect(remote.authorizations).toContain('Bearer remote-secret-token-123');
  });

  it('lists every tool with its source, mode and server state for admins', async () => {
    expect((await app.api('/api/admin/tools')).status).toBe(401);
    const response = await app.api('/api/admin/tools', {
      headers: { Authorization: 'Bearer test-admin-token-0123456789' },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as AdminToolListDto;
    const byName = new Map(body.tools.map((tool) => [tool.name, tool]));
    expect(byName.get('calculator')).toMatchObject({
      source: 'built-in',
      mode: 'inline',
      server: null,
      serverState: null,
      offered: true,
    });
    expect(byName.get('everything__echo')).toMatchObject({
      source: 'mcp',
      server: 'everything',
      serverTool: 'echo',
      mode: 'inline',
      serverState: 'ready',
      background: false,
    });
    expect(byName.get('everything__trigger-long-running-operation')).toMatchObject({
      mode: 'async',
      background: false,
    });
    expect(byName.get('remote__slow_job')).toMatchObject({ source: 'mcp', mode: 'inline', serverState: 'ready' });
    expect(byName.has('everything__get-env')).toBe(false);
    expect(body.servers.map((server) => [server.name, server.transport, server.state, server.supportsTasks])).toEqual([
      ['everything', 'stdio', 'ready', true],
      ['remote', 'http', 'ready', true],
    ]);
  });

  it("runs an MCP tool inline: the model gets the server's answer in the same turn", async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'echo');
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(result.messages[1]?.content).toBe('Echo: hello from the model');
    expect(result.messages[2]?.content).toBe('Tool said: Echo: hello from the model');
    const added = await helpers.send(thread.id, 'add');
    expect(added.messages[1]?.content).toBe('2 + 40 = 42');
    expect(remote.calls.get('add')).toBe(1);
    assertRequestsValid(stub, app.application.deps.settings.budget);
  });

  it('turns resource links and structured content into text, and an isError result into an error the model reads', async () => {
    const thread = await helpers.newThread();
    const links = await helpers.send(thread.id, 'links');
    expect(links.messages[1]?.content).toMatch(/\[resource link: .+ <demo:\/\/resource\/dynamic\/\w+\/1>/);
    const weather = await helpers.send(thread.id, 'weather');
    expect(JSON.parse(weather.messages[1]?.content ?? '{}')).toMatchObject({
      temperature: expect.any(Number),
      conditions: expect.any(String),
    });
    const bad = await helpers.send(thread.id, 'echo badly');
    expect(bad.turn.status).toBe('complete');
    expect(bad.messages[1]?.content).toMatch(/^Error: everything__echo failed: .*message/s);
    expect(bad.messages[2]?.content).toMatch(/^Tool said: Error: everything__echo failed/);
    // An error answer is not a crash: the server stays connected.
    expect(app.application.mcp!.statuses().find((status) => status.name === 'everything')).toMatchObject({
      state: 'ready',
      restarts: 0,
    });
  });

  it('keeps a server connected when it answers a call with an error (the server refused its own malformed result)', async () => {
    const status = () => app.application.mcp!.statuses().find((candidate) => candidate.name === 'remote');
    const before = status()?.restarts ?? 0;
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'malformed');
    expect(result.turn.status).toBe('complete');
    expect(result.messages[1]?.content).toMatch(/^Error: remote__malformed failed/);
    expect(remote.calls.get('malformed')).toBe(1);
    // No restart: everyone else's calls on this server go on.
    expect(status()).toMatchObject({ state: 'ready', restarts: before });
    expect((await helpers.send(thread.id, 'add')).messages[1]?.content).toBe('2 + 40 = 42');
  });

  it('runs an async MCP tool in the tools worker: its progress notifications reach the transcript and the events, then a follow-up', async () => {
    const thread = await helpers.newThread();
    const events = helpers.record(thread.id);
    const result = await helpers.send(thread.id, 'long');
    const runId = runIdOf(result.messages[1]?.content);
    expect(runId).not.toBe('');
    await waitFor(() => stub.requests.some(isFollowUp), { timeoutMs: 30_000, what: 'the follow-up request' });
    // The run's transcript message showed the progress while it ran (as every open tab saw it).
    const updates = events.flatMap((event) =>
      event.type === 'message-updated' && event.message.toolRunId === runId ? [event.message.content] : [],
    );
    expect(updates.some((content) => content.includes('[50%]'))).toBe(true);
    const run = (await (await app.api(`/api/tool-runs/${runId}`, { token: helpers.token })).json()) as ToolRunDto;
    expect(run).toMatchObject({ name: 'everything__trigger-long-running-operation', status: 'succeeded', progress: 1 });
    expect(run.resultPreview).toContain('Long running operation completed');
    const progress = events.filter((event) => event.type === 'tool-progress' && event.runId === runId);
    expect(progress.map((event) => event.type === 'tool-progress' && event.progress)).toEqual(
      expect.arrayContaining([0.25, 0.5, 0.75]),
    );
    const followUp = stub.requests.find(isFollowUp)!;
    expect(serverNoteText(lastMessage(followUp))).toContain(
      `Result of everything__trigger-long-running-operation (run ${runId}`,
    );
  });

  it('refreshes the list on a tools-changed notification', async () => {
    remote.addTool('fresh_tool');
    const thread = await helpers.newThread();
    await waitFor(
      () => app.application.deps.toolDefinitions().some((tool) => tool.function.name === 'remote__fresh_tool'),
      { timeoutMs: 10_000, what: 'the new tool in the list' },
    );
    const result = await helpers.send(thread.id, 'new tool');
    expect(result.messages[1]?.content).toBe('fresh_tool ran');
  });

  it('restarts a crashed stdio server with backoff; its tools answer a clear error meanwhile', async () => {
    const status = () => app.application.mcp!.statuses().find((candidate) => candidate.name === 'everything')!;
    const pid = status().pid;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, 'SIGKILL');
    await waitFor(() => status().state !== 'ready', { timeoutMs: 10_000, what: 'the crash to be noticed' });
    const thread = await helpers.newThread();
    const during = await helpers.send(thread.id, 'echo');
    // Either the call found the server down, or the restart was already done: both are answers, never a crash.
    expect(during.turn.status).toBe('complete');
    if (during.messages[1]?.content !== 'Echo: hello from the model') {
      expect(during.messages[1]?.content).toMatch(
        /^Error: everything__echo failed: the MCP server everything is not available right now/,
      );
    }
    await waitFor(() => status().state === 'ready', { timeoutMs: 20_000, what: 'the restart' });
    expect(status().restarts).toBeGreaterThanOrEqual(1);
    expect(status().pid).not.toBe(pid);
    const after = await helpers.send(thread.id, 'echo');
    expect(after.messages[1]?.content).toBe('Echo: hello from the model');
  });
});

describe('MCP configuration at start', () => {
  it('refuses two tools that map to one name, naming both', async () => {
    const { defineTool } = await import('../../src/core/tools');
    const { z } = await import('zod');
    const clash = defineTool({
      name: 'everything__echo',
      description: 'A local tool with a clashing name.',
      mode: 'inline',
      schema: z.object({}),
      run: async () => 'local',
    });
    await expect(
      startTestApp({ env: { MCP_SERVERS: everythingServers() }, tuning: { extraTools: [clash] } }),
    ).rejects.toThrow(
      /Tool name everything__echo is claimed twice: by a built-in tool and by MCP server everything \(its tool "echo"\)/,
    );
  });

  it('offers configured tools only within TOOL_SCHEMA_MAX_TOKENS, and takes what they cost off the pack budget', async () => {
    const app = await startTestApp({ env: { MCP_SERVERS: everythingServers(), TOOL_SCHEMA_MAX_TOKENS: '150' } });
    try {
      const described = app.application.deps.toolDefinitions();
      const counter = app.application.deps.settings.counter;
      const mcpDefinitions = described.filter((tool) => tool.function.name.startsWith('everything__'));
      expect(mcpDefinitions.length).toBeGreaterThan(0);
      expect(mcpDefinitions.length).toBeLessThan(11);
      expect(mcpDefinitions.reduce((sum, tool) => sum + counter.countToolSchemas([tool]), 0)).toBeLessThanOrEqual(150);
      const { token } = await app.guest();
      const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as {
        id: string;
      };
      const context = (await (await app.api(`/api/threads/${thread.id}/context`, { token })).json()) as {
        budget: number;
      };
      // A new thread holds no condensed result: read_tool_result is not offered (nothing for it to read).
      const offered = described.filter((tool) => tool.function.name !== 'read_tool_result');
      expect(offered.length).toBe(described.length - 1);
      expect(context.budget).toBe(app.application.deps.settings.budget - counter.countToolSchemas(offered));
    } finally {
      await app.stop();
    }
  });
});
