import { z } from 'zod';
import type { OpenAIFunctionTool } from '../context/types';
import type { Tool, ToolSource } from './types';

/** One tool as admins see it: whether it is offered and what its schema costs. */
export interface RegisteredTool {
  tool: Tool;
  group: string;
  offered: boolean;
  schemaTokens: number;
}

export interface ToolRegistry {
  list(): readonly Tool[];
  get(name: string): Tool | undefined;
  /** The tools in OpenAI's function format, offered on every chat call (configured tools within their token cap). */
  definitions(): OpenAIFunctionTool[];
  /** Every tool with its group and whether it is offered. */
  describe(): RegisteredTool[];
  /**
   * Replaces a group of configured tools (an MCP server's, the external runners'). A name already taken by
   * another group is refused: throws at start (`strict`), otherwise the tool is left out and named in `refused`.
   */
  setGroup(group: string, tools: readonly Tool[], options?: { strict?: boolean }): { refused: string[] };
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The OpenAI `parameters` schema of a zod schema (input side: arguments with defaults are optional). */
export function toParametersSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  if (json.type !== 'object') throw new TypeError('A tool schema must be a z.object');
  return json;
}

function definitionOf(tool: Tool): OpenAIFunctionTool {
  const parameters = tool.parameters ?? toParametersSchema(tool.schema);
  if (parameters.type !== 'object') throw new TypeError(`Tool ${tool.name}: its parameters must be an object schema`);
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters } };
}

/** Says where a tool comes from, for error messages. */
export function describeSource(tool: Tool): string {
  const source: ToolSource = tool.source ?? { kind: 'built-in' };
  if (source.kind === 'mcp') return `MCP server ${source.server} (its tool ${JSON.stringify(source.tool)})`;
  if (source.kind === 'external') return `external runner ${source.url}`;
  return 'a built-in tool';
}

const BUILT_IN = 'built-in';

/**
 * Builds the registry. The `tools` given here are fixed (built-ins and deployment tools); configured groups are
 * added with `setGroup`. Throws on a duplicate or invalid name, or a schema that is not an object.
 * `schemaCap` bounds the tokens the configured groups' schemas may take from the pack: tools past it (in group
 * order) are not offered, and the caller is told which through `describe()`.
 */
export function createToolRegistry(
  tools: readonly Tool[],
  schemaCap?: { maxTokens: number; count(definition: OpenAIFunctionTool): number },
): ToolRegistry {
  const groups = new Map<string, { tool: Tool; definition: OpenAIFunctionTool }[]>();
  let described: RegisteredTool[] = [];
  let definitions: OpenAIFunctionTool[] = [];
  const byName = new Map<string, { tool: Tool; group: string }>();

  function rebuild() {
    byName.clear();
    described = [];
    let configuredTokens = 0;
    for (const [group, entries] of groups) {
      for (const { tool, definition } of entries) {
        byName.set(tool.name, { tool, group });
        const schemaTokens = schemaCap ? schemaCap.count(definition) : 0;
        let offered = true;
        if (group !== BUILT_IN && schemaCap) {
          offered = configuredTokens + schemaTokens <= schemaCap.maxTokens;
          if (offered) configuredTokens += schemaTokens;
        }
        described.push({ tool, group, offered, schemaTokens });
      }
    }
    definitions = described
      .filter((entry) => entry.offered)
      .map((entry) => groups.get(entry.group)!.find((candidate) => candidate.tool === entry.tool)!.definition);
  }

  function checked(
    group: string,
    list: readonly Tool[],
    strict: boolean,
  ): { entries: { tool: Tool; definition: OpenAIFunctionTool }[]; refused: string[] } {
    const entries: { tool: Tool; definition: OpenAIFunctionTool }[] = [];
    const refused: string[] = [];
    const seen = new Map<string, Tool>();
    for (const [otherGroup, others] of groups)
      if (otherGroup !== group) for (const { tool } of others) seen.set(tool.name, tool);
    for (const tool of list) {
      if (!TOOL_NAME.test(tool.name))
        throw new TypeError(`Tool name ${JSON.stringify(tool.name)} must match ${TOOL_NAME.source}`);
      const taken = seen.get(tool.name);
      if (taken) {
        const message = `Tool name ${tool.name} is claimed twice: by ${describeSource(taken)} and by ${describeSource(tool)}`;
        if (strict) throw new TypeError(message);
        refused.push(message);
        continue;
      }
      seen.set(tool.name, tool);
      entries.push({ tool, definition: definitionOf(tool) });
    }
    return { entries, refused };
  }

  groups.set(BUILT_IN, []);
  for (const tool of tools) {
    if (!TOOL_NAME.test(tool.name))
      throw new TypeError(`Tool name ${JSON.stringify(tool.name)} must match ${TOOL_NAME.source}`);
    if (groups.get(BUILT_IN)!.some((entry) => entry.tool.name === tool.name))
      throw new TypeError(`Tool ${tool.name} is registered twice`);
    groups.get(BUILT_IN)!.push({ tool, definition: definitionOf(tool) });
  }
  rebuild();

  return {
    list: () => described.map((entry) => entry.tool),
    get: (name) => byName.get(name)?.tool,
    definitions: () => definitions,
    describe: () => described,
    setGroup(group, list, options = {}) {
      if (group === BUILT_IN) throw new TypeError('the built-in group is fixed');
      const { entries, refused } = checked(group, list, options.strict ?? false);
      groups.set(group, entries);
      rebuild();
      return { refused };
    },
  };
}
