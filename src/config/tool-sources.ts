import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The tools that come from outside: MCP servers (`MCP_SERVERS`) and external runners (`EXTERNAL_TOOLS`).
 * Each variable is inline JSON or the path of a JSON file. `${NAME}` (or VS Code's `${env:NAME}`) inside a header
 * value or a stdio `env` value is replaced by the environment variable NAME; such values are secrets (scrubbed from
 * every log line).
 *
 * `MCP_SERVERS` takes the file people already have: Claude Desktop's and Cursor's `{"mcpServers": {...}}`, VS Code's
 * `{"servers": {...}}` (entries with `"type": "stdio" | "http"`), or the plain map of server names to servers.
 * A top-level object whose only key is `mcpServers` or `servers` and whose value is a map of server objects is the
 * wrapper; anything else is the plain map (so a server named `servers`, whose value has a `command` or a `url`, stays
 * possible there).
 */

const SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;
/** `${NAME}`, or VS Code's `${env:NAME}`: the environment variable NAME. */
const TEMPLATE = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** VS Code's `${input:id}`, a value it prompts for: there is no one to prompt here. */
const INPUT_REFERENCE = /\$\{input:[^}]*\}/;

const toolOptions = z.strictObject({
  /** `inline`: a tools/call inside the turn; `async`: a persistent run in the tools worker. */
  mode: z.enum(['inline', 'async']).optional(),
  timeoutMs: z.number().int().min(100).optional(),
});

const common = {
  /** Tool names of the server to offer (`*` or absent: all). */
  allow: z.array(z.string().min(1)).optional(),
  /** Tool names never offered (wins over allow). */
  deny: z.array(z.string().min(1)).default([]),
  /** Default mode of the server's tools (`inline`); a tool that requires tasks is always `async`. */
  mode: z.enum(['inline', 'async']).default('inline'),
  timeoutMs: z.number().int().min(100).optional(),
  /** Per-tool overrides, by the server's own tool name. */
  tools: z.record(z.string(), toolOptions).default({}),
};

/** The transports we speak; an entry may name its own (VS Code, Claude Code) and must then agree with its fields. */
const SUPPORTED_TYPES = ['stdio', 'http'] as const;

const stdioServer = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  ...common,
});

const httpServer = z.strictObject({
  type: z.literal('http').optional(),
  url: z.url(),
  headers: z.record(z.string(), z.string()).default({}),
  ...common,
});

const serversSchema = z.record(
  z.string().regex(SERVER_NAME, 'server names: letters, digits, _ and -, at most 40'),
  z.record(z.string(), z.unknown()),
);

const externalTool = z.strictObject({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must match ^[a-zA-Z0-9_-]{1,64}$'),
  description: z.string().min(1),
  /** The JSON schema of the arguments (an object schema). */
  parameters: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
  mode: z.literal('external'),
  /** Where the tools worker POSTs the signed run request; cancels go to `<url>/cancel` unless `cancelUrl` is set. */
  url: z.url(),
  cancelUrl: z.url().optional(),
  timeoutMs: z.number().int().min(100).optional(),
  /**
   * This runner's own HMAC secret (>= 32 characters; `${NAME}` names an environment variable): its run requests are
   * signed and its callbacks checked with it, so one runner cannot report into another's runs. Default
   * TOOL_WEBHOOK_SECRET (shared by the runners that set none).
   */
  secret: z.string().min(1).optional(),
});

export type McpToolOptions = z.infer<typeof toolOptions>;
interface McpCommon {
  allow?: string[];
  deny: string[];
  mode: 'inline' | 'async';
  timeoutMs?: number;
  tools: Record<string, McpToolOptions>;
}
export type McpServerConfig = McpCommon & { name: string } & (
    | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
    | { transport: 'http'; url: string; headers: Record<string, string> }
  );
export type ExternalToolConfig = z.infer<typeof externalTool>;

export interface ToolSources {
  mcpServers: McpServerConfig[];
  externalTools: ExternalToolConfig[];
  /** Values substituted from `${NAME}` references: the log scrubs them. */
  secrets: string[];
}

function readJson(variable: string, value: string): unknown {
  const trimmed = value.trim();
  let text = trimmed;
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) {
    try {
      text = readFileSync(trimmed, 'utf8');
    } catch (error) {
      throw new Error(
        `${variable}: cannot read ${trimmed} (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${variable}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

function describe(variable: string, error: z.ZodError, prefix: string[] = []): string {
  const issue = error.issues[0];
  return `${variable}: ${issue ? `${[...prefix, ...issue.path.map(String)].join('.') || '(top)'}: ${issue.message}` : 'invalid'}`;
}

const WRAPPER_KEYS = ['mcpServers', 'servers'] as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A map whose every value is an object (a server's own fields include strings: `command`, `url`). */
function isMapOfServers(value: unknown): boolean {
  return isPlainObject(value) && Object.values(value).every(isPlainObject);
}

/** The servers map inside Claude Desktop's / Cursor's `mcpServers` or VS Code's `servers` wrapper, or the plain map. */
function unwrapServers(config: unknown): unknown {
  if (!isPlainObject(config)) return config;
  const keys = Object.keys(config);
  const wrapper = WRAPPER_KEYS.find((key) => key in config && isMapOfServers(config[key]));
  if (wrapper === undefined) return config;
  if (keys.length === 1) return config[wrapper];
  // A wrapper beside other keys (VS Code's `inputs`, say) is neither shape: say so rather than read `inputs` as a server.
  const others = keys.filter((key) => key !== wrapper);
  throw new Error(
    `MCP_SERVERS: "${wrapper}" must be the only top-level key (also found: ${others.join(', ')}); \${NAME} references replace VS Code's inputs`,
  );
}

/**
 * A server is stdio when it has a `command` (or says `"type": "stdio"`), Streamable HTTP when it has a `url` (or says
 * `"type": "http"`); another `type` (`sse`, say) is refused by name.
 */
function parseServer(
  name: string,
  raw: Record<string, unknown>,
): z.infer<typeof stdioServer> | z.infer<typeof httpServer> {
  const type = raw.type;
  if (type !== undefined && !SUPPORTED_TYPES.includes(type as (typeof SUPPORTED_TYPES)[number])) {
    throw new Error(
      `MCP_SERVERS: ${name}.type: ${JSON.stringify(type)} is not supported (stdio or http, which is Streamable HTTP)`,
    );
  }
  if (type === undefined && !('command' in raw) && !('url' in raw))
    throw new Error(`MCP_SERVERS: ${name}: needs a command (stdio) or a url (Streamable HTTP)`);
  const stdio = type === 'stdio' || (type === undefined && 'command' in raw);
  const parsed = stdio ? stdioServer.safeParse(raw) : httpServer.safeParse(raw);
  if (!parsed.success) throw new Error(describe('MCP_SERVERS', parsed.error, [name]));
  return parsed.data;
}

function substitute(
  variable: string,
  where: string,
  value: string,
  source: Record<string, string | undefined>,
  secrets: string[],
): string {
  const input = INPUT_REFERENCE.exec(value)?.[0];
  if (input)
    throw new Error(
      `${variable}: ${where}: ${input} (a VS Code input) cannot be prompted for here; use \${NAME} with an environment variable`,
    );
  return value.replace(TEMPLATE, (_match, name: string) => {
    const resolved = source[name];
    if (resolved === undefined || resolved === '')
      throw new Error(`${variable}: ${where} names the environment variable ${name}, which is not set`);
    secrets.push(resolved);
    return resolved;
  });
}

/** Parses `MCP_SERVERS` and `EXTERNAL_TOOLS`; throws an Error whose message names the variable and the field. */
export function parseToolSources(input: {
  mcpServers?: string;
  externalTools?: string;
  source: Record<string, string | undefined>;
}): ToolSources {
  const secrets: string[] = [];
  const mcpServers: McpServerConfig[] = [];
  if (input.mcpServers) {
    const parsed = serversSchema.safeParse(unwrapServers(readJson('MCP_SERVERS', input.mcpServers)));
    if (!parsed.success) throw new Error(describe('MCP_SERVERS', parsed.error));
    for (const [name, raw] of Object.entries(parsed.data)) {
      const server = parseServer(name, raw);
      const base = {
        name,
        allow: server.allow,
        deny: server.deny,
        mode: server.mode,
        timeoutMs: server.timeoutMs,
        tools: server.tools,
      } as McpCommon & { name: string };
      if ('command' in server) {
        const env = Object.fromEntries(
          Object.entries(server.env).map(([key, value]) => [
            key,
            substitute('MCP_SERVERS', `${name}.env.${key}`, value, input.source, secrets),
          ]),
        );
        mcpServers.push({
          ...base,
          transport: 'stdio',
          command: server.command,
          args: server.args,
          env,
          ...(server.cwd ? { cwd: server.cwd } : {}),
        });
      } else {
        const headers = Object.fromEntries(
          Object.entries(server.headers).map(([key, value]) => [
            key,
            substitute('MCP_SERVERS', `${name}.headers.${key}`, value, input.source, secrets),
          ]),
        );
        mcpServers.push({ ...base, transport: 'http', url: server.url, headers });
      }
    }
  }
  let externalTools: ExternalToolConfig[] = [];
  if (input.externalTools) {
    const parsed = z.array(externalTool).safeParse(readJson('EXTERNAL_TOOLS', input.externalTools));
    if (!parsed.success) throw new Error(describe('EXTERNAL_TOOLS', parsed.error));
    externalTools = parsed.data.map((tool, index) => {
      if (tool.secret === undefined) return tool;
      const secret = substitute('EXTERNAL_TOOLS', `${index}.secret`, tool.secret, input.source, secrets);
      if (secret.length < 32) throw new Error(`EXTERNAL_TOOLS: ${index}.secret: must be at least 32 characters`);
      secrets.push(secret);
      return { ...tool, secret };
    });
  }
  return { mcpServers, externalTools, secrets };
}
