import { z } from 'zod';
import type { Tool } from './types';

/** A tool as OpenAI's Chat Completions API takes it. */
export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ToolRegistry {
  list(): readonly Tool[];
  get(name: string): Tool | undefined;
  /** The tools in OpenAI's function format, offered on every chat call. */
  definitions(): OpenAIFunctionTool[];
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The OpenAI `parameters` schema of a zod schema (input side: arguments with defaults are optional). */
export function toParametersSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  if (json.type !== 'object') throw new TypeError('A tool schema must be a z.object');
  return json;
}

/** Builds the registry; throws on a duplicate or invalid name, or a schema that is not an object. */
export function createToolRegistry(tools: readonly Tool[]): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (!TOOL_NAME.test(tool.name)) throw new TypeError(`Tool name ${JSON.stringify(tool.name)} must match ${TOOL_NAME.source}`);
    if (byName.has(tool.name)) throw new TypeError(`Tool ${tool.name} is registered twice`);
    byName.set(tool.name, tool);
  }
  const definitions = [...byName.values()].map((tool): OpenAIFunctionTool => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: toParametersSchema(tool.schema) },
  }));
  return {
    list: () => [...byName.values()],
    get: (name) => byName.get(name),
    definitions: () => definitions,
  };
}
