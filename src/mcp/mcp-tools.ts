import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { BackgroundStatus, BackgroundWork, Tool, ToolContext } from '../core/tools/types';
import { ToolError } from '../core/tools/tool-error';
import { isTransportFailure } from './is-transport-failure';
import { mcpResultText, type McpCallResult } from './mcp-result-text';
import type { ListedTool, McpServerConnection } from './mcp-server-connection';
import { mcpToolName } from './mcp-tool-name';

/** Arguments are checked by the server against its own schema; here only that they are an object. */
const ANY_ARGUMENTS = z.record(z.string(), z.unknown());
const INLINE_TIMEOUT_MS = 30_000;

function progressOf(update: { progress: number; total?: number; message?: string }): {
  progress: number;
  note?: string;
} {
  const progress = update.total && update.total > 0 ? Math.min(1, update.progress / update.total) : 0;
  const note = update.message ?? (update.total ? undefined : `${update.progress}`);
  return { progress, ...(note ? { note } : {}) };
}

function resultOrError(result: McpCallResult): string {
  const { text, isError } = mcpResultText(result);
  // The model reads an isError result as the call's error, not as a crash of ours.
  if (isError) throw new ToolError(text);
  return text;
}

/** Whether the server asked for task-based execution of this tool. */
function taskSupport(listed: ListedTool): 'required' | 'optional' | 'forbidden' {
  const support = (listed.execution as { taskSupport?: string } | undefined)?.taskSupport;
  return support === 'required' || support === 'optional' ? support : 'forbidden';
}

/**
 * The tools a server offers, as this server's tools: filtered by the server's allow and deny lists, named by
 * `mcpToolName`, with the configured mode. A tool that requires tasks is async. An async tool of a server that
 * supports tasks, over Streamable HTTP, is background work (submitted as a task; polled by later jobs; resumed by
 * task id after a worker died); over stdio the task lives in the worker's child process, so the call is held by the
 * job (a retry after a worker died calls the tool again).
 */
export function mcpTools(
  connection: McpServerConnection,
  listed: readonly ListedTool[],
  options: { asyncTimeoutMs: number },
): Tool[] {
  const { config } = connection;
  const allowed = (name: string) =>
    !config.deny.includes(name) && (!config.allow || config.allow.includes('*') || config.allow.includes(name));
  return listed
    .filter((tool) => allowed(tool.name))
    .map((listedTool): Tool => {
      const overrides = config.tools[listedTool.name] ?? {};
      const support = taskSupport(listedTool);
      const mode = support === 'required' ? 'async' : (overrides.mode ?? config.mode);
      const timeoutMs =
        overrides.timeoutMs ?? config.timeoutMs ?? (mode === 'inline' ? INLINE_TIMEOUT_MS : options.asyncTimeoutMs);
      const parameters = { ...(listedTool.inputSchema as Record<string, unknown>) };
      delete parameters.$schema;
      const background =
        mode === 'async' && support !== 'forbidden' && config.transport === 'http' && connection.supportsTasks()
          ? taskWork(connection, listedTool.name, timeoutMs)
          : undefined;
      return {
        name: mcpToolName(config.name, listedTool.name),
        description: (
          listedTool.description ??
          listedTool.title ??
          `${listedTool.name} (MCP server ${config.name})`
        ).slice(0, 1024),
        schema: ANY_ARGUMENTS,
        parameters: { type: 'object', ...parameters },
        mode,
        timeoutMs,
        source: { kind: 'mcp', server: config.name, tool: listedTool.name },
        ...(background ? { background } : {}),
        run: (args, context) =>
          support === 'required'
            ? callAsTask(connection, listedTool.name, args as Record<string, unknown>, context, timeoutMs)
            : callTool(connection, listedTool.name, args as Record<string, unknown>, context, timeoutMs),
      };
    });
}

async function callTool(
  connection: McpServerConnection,
  name: string,
  args: Record<string, unknown>,
  context: ToolContext,
  timeoutMs: number,
): Promise<string> {
  const client = connection.client();
  let result: McpCallResult;
  try {
    result = (await client.callTool({ name, arguments: args }, CallToolResultSchema, {
      signal: context.signal,
      timeout: timeoutMs + 1000,
      resetTimeoutOnProgress: true,
      onprogress: (update) => {
        const { progress, note } = progressOf(update);
        void context.reportProgress(progress, note);
      },
    })) as McpCallResult;
  } catch (error) {
    if (isTransportFailure(error) && !context.signal.aborted) connection.reportTransportFailure(error);
    throw error;
  }
  // Outside the try: an isError answer is the tool's error, not a sign the server is gone.
  return resultOrError(result);
}

/** A tool that requires tasks, over stdio: submitted and polled inside this call; an abort cancels the task. */
async function callAsTask(
  connection: McpServerConnection,
  name: string,
  args: Record<string, unknown>,
  context: ToolContext,
  timeoutMs: number,
): Promise<string> {
  const client = connection.client();
  let taskId: string | null = null;
  const cancel = () => {
    // Best effort: the aborted call ends either way, and a task its server could not cancel ends at its own TTL.
    // eslint-disable-next-line no-restricted-syntax -- best-effort cancel of an aborted call
    if (taskId) void client.experimental.tasks.cancelTask(taskId).catch(() => undefined);
  };
  context.signal.addEventListener('abort', cancel, { once: true });
  try {
    const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
      signal: context.signal,
      timeout: timeoutMs + 1000,
      task: { ttl: timeoutMs + 60_000 },
      onprogress: (update) => {
        const { progress, note } = progressOf(update);
        void context.reportProgress(progress, note);
      },
    });
    for await (const message of stream) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'taskStatus' && message.task.statusMessage)
        void context.reportProgress(0, message.task.statusMessage);
      if (message.type === 'result') return resultOrError(message.result as McpCallResult);
      if (message.type === 'error') throw message.error;
    }
    throw new Error('the task ended without a result');
  } finally {
    context.signal.removeEventListener('abort', cancel);
  }
}

/** Task-augmented calls over Streamable HTTP: submit, then later jobs (any worker) poll by task id. */
function taskWork(connection: McpServerConnection, name: string, timeoutMs: number): BackgroundWork {
  return {
    pollIntervalMs: 1000,
    async submit(args, context) {
      const client = connection.client();
      const created = await client.request(
        { method: 'tools/call', params: { name, arguments: args } },
        CreateTaskResultSchema,
        {
          signal: context.signal,
          timeout: 30_000,
          task: { ttl: timeoutMs + 10 * 60_000 },
          // Progress notifications reach this process for as long as it lives; polls carry the status otherwise.
          onprogress: (update) => {
            const { progress, note } = progressOf(update);
            void context.reportProgress(progress, note);
          },
        },
      );
      return { taskId: created.task.taskId };
    },
    async poll(taskId): Promise<BackgroundStatus> {
      const client = connection.client();
      let task;
      try {
        task = await client.experimental.tasks.getTask(taskId);
      } catch (error) {
        // The server no longer knows the task (it restarted, or the task expired): it cannot be resumed.
        if (error instanceof McpError && error.code === -32602)
          return {
            state: 'failed',
            error: `The MCP server ${connection.name} no longer knows task ${taskId} (${error.message}); run it again if it is still needed.`,
          };
        if (isTransportFailure(error)) connection.reportTransportFailure(error);
        throw error;
      }
      if (task.status === 'working' || task.status === 'input_required')
        return { state: 'working', ...(task.statusMessage ? { note: task.statusMessage } : {}) };
      if (task.status === 'cancelled')
        return { state: 'cancelled', error: task.statusMessage ?? 'The task was cancelled.' };
      const result = await client.experimental.tasks
        .getTaskResult(taskId, CallToolResultSchema)
        .catch((error: unknown) => {
          if (task.status === 'failed') return null;
          throw error;
        });
      if (!result) return { state: 'failed', error: task.statusMessage ?? 'The task failed.' };
      const { text, isError } = mcpResultText(result as McpCallResult);
      return isError || task.status === 'failed' ? { state: 'failed', error: text } : { state: 'succeeded', text };
    },
    async cancel(taskId) {
      await connection.client().experimental.tasks.cancelTask(taskId);
    },
  };
}
