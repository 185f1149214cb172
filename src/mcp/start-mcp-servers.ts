import type { McpServerConfig } from '../config/tool-sources';
import type { LogPort } from '../core/ports';
import type { ToolRegistry } from '../core/tools/tool-registry';
import { McpServerConnection, type ListedTool, type McpServerStatus } from './mcp-server-connection';
import { mcpTools } from './mcp-tools';

/** The MCP servers of this process. */
export interface McpHub {
  statuses(): McpServerStatus[];
  close(): Promise<void>;
}

/**
 * Connects every configured server (in parallel), lists their tools and adds them to the registry, one group per
 * server. A name collision found at start stops the start with an error naming both tools; a server that cannot be
 * reached at start is retried in the background (its tools appear when it connects). Later refreshes (tools-changed
 * notifications, reconnects) that collide leave the newcomer out, logged.
 */
export async function startMcpServers(input: {
  servers: readonly McpServerConfig[];
  registry: ToolRegistry;
  log: LogPort;
  asyncTimeoutMs: number;
  backoffMs?: number;
}): Promise<McpHub> {
  const { registry, log } = input;
  let started = false;
  const pending = new Map<string, ListedTool[]>();
  const connections = input.servers.map((config) => {
    const connection: McpServerConnection = new McpServerConnection(config, {
      log,
      ...(input.backoffMs !== undefined ? { backoffMs: input.backoffMs } : {}),
      onTools: (listed) => {
        if (!started) {
          pending.set(config.name, listed);
          return;
        }
        const { refused } = registry.setGroup(
          `mcp:${config.name}`,
          mcpTools(connection, listed, { asyncTimeoutMs: input.asyncTimeoutMs }),
        );
        for (const message of refused) log.error({ server: config.name }, `MCP tool refused: ${message}`);
      },
    });
    return connection;
  });
  await Promise.all(connections.map((connection) => connection.start()));
  try {
    for (const connection of connections) {
      const listed = pending.get(connection.name);
      if (listed)
        registry.setGroup(
          `mcp:${connection.name}`,
          mcpTools(connection, listed, { asyncTimeoutMs: input.asyncTimeoutMs }),
          { strict: true },
        );
    }
  } catch (error) {
    await Promise.all(connections.map((connection) => connection.close()));
    throw error;
  }
  started = true;
  return {
    statuses: () => connections.map((connection) => connection.status()),
    close: async () => {
      await Promise.all(connections.map((connection) => connection.close()));
    },
  };
}
