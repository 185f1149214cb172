import type { ToolRegistry } from '../core/tools/tool-registry';
import type { McpHub } from '../mcp';
import type { AdminToolListDto } from '../shared/admin-api';

/** The admin view of the tools: every registered tool with its source and mode, and the MCP servers' state. */
export function describeTools(registry: ToolRegistry, mcp: McpHub | null): AdminToolListDto {
  const servers = mcp?.statuses() ?? [];
  const stateOf = new Map(servers.map((server) => [server.name, server.state]));
  return {
    tools: registry.describe().map(({ tool, offered, schemaTokens }) => {
      const source = tool.source ?? { kind: 'built-in' as const };
      return {
        name: tool.name,
        description: tool.description,
        source: source.kind,
        server: source.kind === 'mcp' ? source.server : null,
        serverTool: source.kind === 'mcp' ? source.tool : null,
        url: source.kind === 'external' ? source.url : null,
        mode: source.kind === 'external' ? 'external' : tool.mode,
        background: Boolean(tool.background),
        offered,
        schemaTokens,
        serverState: source.kind === 'mcp' ? (stateOf.get(source.server) ?? null) : null,
      };
    }),
    servers: servers.map((server) => ({
      name: server.name,
      transport: server.transport,
      state: server.state,
      tools: server.tools,
      restarts: server.restarts,
      lastError: server.lastError,
      supportsTasks: server.supportsTasks,
    })),
  };
}
