import { createToolRegistry, shortToolSchema, SHORT_TOOL_SCHEMA_WINDOW, type ToolRegistry } from '../core/tools';
import { externalTools } from '../external';
import { startMcpServers, type McpHub } from '../mcp';
import { deploymentTools } from '../tools';
import type { Wiring } from './application';

/**
 * The tools offered to the model: the deployment's built-in tools and the extras, the MCP servers' (started here)
 * and the external runners'. Configured tools (MCP servers, external runners) share TOOL_SCHEMA_MAX_TOKENS of the
 * pack; the rest are not offered (each logged).
 */
export async function wireToolRegistry({
  env,
  log,
  tuning,
  settings,
}: Wiring): Promise<{ registry: ToolRegistry; mcp: McpHub | null }> {
  const schemaCap = env.TOOL_SCHEMA_MAX_TOKENS ?? Math.min(2000, Math.floor(settings.budget / 4));
  // A small window (a local model's 4k, the offline demo's 2k) is offered the built-in tools' short schemas.
  const builtInTools =
    settings.profile.maxInputTokens <= SHORT_TOOL_SCHEMA_WINDOW
      ? deploymentTools(env).map(shortToolSchema)
      : deploymentTools(env);
  const registry = createToolRegistry([...builtInTools, ...(tuning.extraTools ?? [])], {
    maxTokens: schemaCap,
    count: (definition) => settings.counter.countToolSchemas([definition]),
  });
  const mcp =
    env.toolSources.mcpServers.length > 0
      ? await startMcpServers({
          servers: env.toolSources.mcpServers,
          registry,
          log,
          asyncTimeoutMs: env.TOOL_TIMEOUT_MS,
          ...(tuning.mcpBackoffMs !== undefined ? { backoffMs: tuning.mcpBackoffMs } : {}),
        })
      : null;
  if (env.toolSources.externalTools.length > 0 && env.PUBLIC_BASE_URL) {
    registry.setGroup(
      'external',
      externalTools(env.toolSources.externalTools, {
        secret: env.TOOL_WEBHOOK_SECRET,
        publicBaseUrl: env.PUBLIC_BASE_URL,
        timeoutMs: env.TOOL_TIMEOUT_MS,
      }),
      { strict: true },
    );
  }
  for (const entry of registry.describe().filter((candidate) => !candidate.offered)) {
    log.warn(
      { tool: entry.tool.name, schemaTokens: entry.schemaTokens, cap: schemaCap },
      'tool not offered: its schema is past TOOL_SCHEMA_MAX_TOKENS',
    );
  }
  return { registry, mcp };
}
