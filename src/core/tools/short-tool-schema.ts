import { toParametersSchema } from './tool-registry';
import type { Tool } from './types';

/**
 * Windows of this many tokens or less are offered the built-in tools with short schemas: with the full ones, tool
 * definitions took a third of the 2,048-token demo window's budget.
 */
export const SHORT_TOOL_SCHEMA_WINDOW = 4096;

/**
 * Keywords a small window goes without: descriptions (the parameter names and types say enough) and bounds the
 * tool's own schema checks anyway (a call out of bounds gets the validation error back and tries again).
 */
const LEFT_OUT = new Set(['description', 'pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum']);

/** A JSON schema without the keywords in LEFT_OUT. */
function withoutDescriptions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions);
  if (schema === null || typeof schema !== 'object') return schema;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (LEFT_OUT.has(key) && (typeof value === 'string' || typeof value === 'number')) continue;
    // Under `properties` the keys are parameter names, never schema keywords: a parameter may be called "description".
    result[key] =
      key === 'properties' && value !== null && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([name, each]) => [name, withoutDescriptions(each)]))
        : withoutDescriptions(value);
  }
  return result;
}

function firstSentence(text: string): string {
  const end = text.search(/[.!?](\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

/**
 * The tool as a small window offers it: its `shortDescription` (default: its description's first sentence) and its
 * parameters' names, types and defaults. Validation is unchanged: the arguments still go through the tool's schema.
 */
export function shortToolSchema(tool: Tool): Tool {
  const parameters = tool.parameters ?? toParametersSchema(tool.schema);
  return {
    ...tool,
    description: tool.shortDescription ?? firstSentence(tool.description),
    parameters: withoutDescriptions(parameters) as Record<string, unknown>,
  };
}
