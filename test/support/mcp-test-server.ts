import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { isInitializeRequest, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * A small MCP server on the SDK, over Streamable HTTP, for tests:
 * - `add` (inline): a + b;
 * - `slow_job` (task-based: taskSupport optional): `steps` steps of `stepMs` each, progress notifications and a
 *   status message per step, result `job <label> done after N steps`; `fail: true` fails at the last step;
 *   cancellable (the cancel is recorded in `cancelled`);
 * - `malformed` (inline): answers a result that is not a valid CallToolResult (a content item of an unknown type),
 *   so the client's result-schema check fails while the connection is fine;
 * - `addTool(name)` registers one more tool at run time (clients get a tools-changed notification).
 * Tasks are kept across sessions (a second worker resumes a first one's task by its id).
 * `requireToken` makes every request without `Authorization: Bearer <token>` a 401.
 */
export interface McpTestServer {
  url: string;
  /** Calls per tool name (a task-based call counts once, when the task is created). */
  calls: Map<string, number>;
  /** Task ids whose cancel arrived. */
  cancelled: Set<string>;
  /** Task ids created, in order. */
  tasks: string[];
  /** Authorization headers seen. */
  authorizations: Set<string>;
  addTool(name: string): void;
  taskStatus(taskId: string): Promise<Task | null>;
  close(): Promise<void>;
}

/** The SDK's in-memory store, shared by every session (the SDK's scopes tasks to the session that made them). */
class SharedTaskStore implements TaskStore {
  constructor(
    private readonly inner: InMemoryTaskStore,
    private readonly onCancel: (taskId: string) => void,
  ) {}
  createTask(...[params, requestId, request]: Parameters<TaskStore['createTask']>) {
    return this.inner.createTask(params, requestId, request);
  }
  getTask(taskId: string) {
    return this.inner.getTask(taskId);
  }
  storeTaskResult(taskId: string, status: 'completed' | 'failed', result: Result) {
    return this.inner.storeTaskResult(taskId, status, result);
  }
  getTaskResult(taskId: string) {
    return this.inner.getTaskResult(taskId);
  }
  async updateTaskStatus(taskId: string, status: Task['status'], statusMessage?: string) {
    if (status === 'cancelled') this.onCancel(taskId);
    return this.inner.updateTaskStatus(taskId, status, statusMessage);
  }
  listTasks(cursor?: string) {
    return this.inner.listTasks(cursor);
  }
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

export async function startMcpTestServer(
  options: { requireToken?: string; port?: number } = {},
): Promise<McpTestServer> {
  const calls = new Map<string, number>();
  const cancelled = new Set<string>();
  const tasks: string[] = [];
  const authorizations = new Set<string>();
  const extraTools: string[] = [];
  const servers = new Set<McpServer>();
  const inner = new InMemoryTaskStore();
  const aborts = new Map<string, AbortController>();
  const taskStore = new SharedTaskStore(inner, (taskId) => {
    cancelled.add(taskId);
    aborts.get(taskId)?.abort();
  });
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);

  function registerExtra(server: McpServer, name: string) {
    server.registerTool(name, { description: `Added at run time: ${name}`, inputSchema: {} }, async () => {
      count(name);
      return { content: [{ type: 'text', text: `${name} ran` }] };
    });
  }

  function buildServer(): McpServer {
    const server = new McpServer(
      { name: 'test-server', version: '1.0.0' },
      {
        capabilities: { tools: { listChanged: true }, tasks: { requests: { tools: { call: {} } }, cancel: {} } },
        taskStore,
      },
    );
    server.registerTool(
      'add',
      { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => {
        count('add');
        return { content: [{ type: 'text', text: `${a} + ${b} = ${a + b}` }] };
      },
    );
    server.registerTool('malformed', { description: 'Answers a malformed result.', inputSchema: {} }, async () => {
      count('malformed');
      return { content: [{ type: 'no-such-type', value: 42 }] } as never;
    });
    server.experimental.tasks.registerToolTask(
      'slow_job',
      {
        description: 'A slow background job that reports progress; can fail on demand.',
        inputSchema: {
          label: z.string(),
          steps: z.number().int().min(1).default(4),
          stepMs: z.number().int().min(1).default(300),
          fail: z.boolean().default(false),
        },
        execution: { taskSupport: 'optional' },
      },
      {
        async createTask({ label, steps, stepMs, fail }, extra) {
          count('slow_job');
          const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 600_000, pollInterval: 200 });
          tasks.push(task.taskId);
          const controller = new AbortController();
          aborts.set(task.taskId, controller);
          const progressToken = extra._meta?.progressToken;
          void (async () => {
            for (let step = 1; step <= steps; step += 1) {
              await new Promise((resolve) => setTimeout(resolve, stepMs));
              if (controller.signal.aborted) return;
              if (fail && step === steps) {
                await inner
                  .storeTaskResult(task.taskId, 'failed', {
                    content: [{ type: 'text', text: `job ${label} failed: the disk is full (ID-9)` }],
                    isError: true,
                  })
                  .catch(() => undefined);
                return;
              }
              if (step < steps) {
                await inner.updateTaskStatus(task.taskId, 'working', `step ${step} of ${steps}`).catch(() => undefined);
                if (progressToken !== undefined) {
                  await extra
                    .sendNotification({
                      method: 'notifications/progress',
                      params: { progressToken, progress: step, total: steps, message: `step ${step} of ${steps}` },
                    })
                    .catch(() => undefined);
                }
              }
            }
            await inner
              .storeTaskResult(task.taskId, 'completed', {
                content: [{ type: 'text', text: `job ${label} done after ${steps} steps` }],
              })
              .catch(() => undefined);
          })();
          return { task };
        },
        async getTask(_args, extra) {
          return (await inner.getTask(extra.taskId))!;
        },
        async getTaskResult(_args, extra) {
          return (await inner.getTaskResult(extra.taskId)) as never;
        },
      },
    );
    for (const name of extraTools) registerExtra(server, name);
    servers.add(server);
    return server;
  }

  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer((request, response) => {
    void (async () => {
      const authorization = request.headers.authorization;
      if (authorization) authorizations.add(authorization);
      if (options.requireToken && authorization !== `Bearer ${options.requireToken}`) {
        response.writeHead(401).end('unauthorized');
        return;
      }
      const body = request.method === 'POST' ? await readBody(request) : undefined;
      const sessionId = request.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (request.method !== 'POST' || !isInitializeRequest(body)) {
          response.writeHead(typeof sessionId === 'string' ? 404 : 400).end();
          return;
        }
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) sessions.delete(created.sessionId);
        };
        await buildServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(request, response, body);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    cancelled,
    tasks,
    authorizations,
    addTool(name) {
      extraTools.push(name);
      for (const server of servers) if (server.isConnected()) registerExtra(server, name);
    },
    taskStatus: (taskId) => inner.getTask(taskId),
    async close() {
      for (const controller of aborts.values()) controller.abort();
      for (const server of servers) await server.close().catch(() => undefined);
      inner.cleanup();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
