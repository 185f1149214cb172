export { startMcpServers } from './start-mcp-servers';
export type { McpHub } from './start-mcp-servers';
export { McpServerConnection, McpServerUnavailableError } from './mcp-server-connection';
export type { McpServerState, McpServerStatus } from './mcp-server-connection';
export { mcpTools } from './mcp-tools';
export { mcpToolName, OPENAI_TOOL_NAME } from './mcp-tool-name';
export { mcpResultText } from './mcp-result-text';
