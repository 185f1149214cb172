import { createHash } from 'node:crypto';

/** OpenAI's rule for function names. */
export const OPENAI_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The name the model sees for an MCP server's tool: `<server>__<tool>`, with every character outside
 * `[a-zA-Z0-9_-]` replaced by `_`; a name longer than 64 characters keeps its first 55 and ends with `_` and 8 hex
 * digits of the SHA-256 of the unmapped `<server>__<tool>` (so two long names stay apart). Two tools that map to
 * one name are refused at start, naming both.
 */
export function mcpToolName(server: string, tool: string): string {
  const raw = `${server}__${tool}`;
  const mapped = raw.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (mapped.length <= 64) return mapped;
  return `${mapped.slice(0, 55)}_${createHash('sha256').update(raw).digest('hex').slice(0, 8)}`;
}
