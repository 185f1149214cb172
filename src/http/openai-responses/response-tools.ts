import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { OpenAIClientSettings } from '../../core/context/types';
import { AppError } from '../../core/errors/app-error';
import { checkToolDescription, DEFAULT_MAX_TOOL_DESCRIPTION_CHARS } from '../openai-facade/tool-description-limit';

/** The response header naming the hosted tools a request offered that this server does not run (dropped). */
export const IGNORED_TOOLS_HEADER = 'X-Chat-Ignored-Tools';

/** Longest tool name the upstream takes (Chat Completions). */
const MAX_UPSTREAM_NAME = 64;

/** Between a namespace and a tool of it, in the name offered upstream (`crm__find_customer`). */
const NAMESPACE_SEPARATOR = '__';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

const functionTool = z
  .object({
    type: z.literal('function'),
    name: z.string().regex(NAME, 'letters, digits, _ and -, at most 64'),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .loose();

const namespaceTool = z
  .object({
    type: z.literal('namespace'),
    name: z.string().regex(NAME, 'letters, digits, _ and -, at most 64'),
    description: z.string().optional(),
    tools: z.array(z.object({ type: z.string().max(100) }).loose()).max(128),
  })
  .loose();

type UpstreamTool = OpenAIClientSettings['tools'][number];

/** A tool the model may call, as the client named it. */
export interface ClientToolName {
  name: string;
  namespace?: string;
}

/** The request's tools as this server offers them, and what it dropped. */
export interface ResponseTools {
  /** Function tools (namespaced ones renamed `<namespace>__<name>`), offered upstream with ours. */
  tools: UpstreamTool[];
  /** Upstream name → the client's name and namespace, for the calls the model makes. */
  names: Map<string, ClientToolName>;
  /** Hosted tool types this server does not run (`web_search`, …), in the order first met. */
  ignored: string[];
}

/** The name a namespaced tool is offered upstream as: `<namespace>__<name>`, hashed past 64 characters. */
export function upstreamNameOf(namespace: string, name: string): string {
  const joined = `${namespace}${NAMESPACE_SEPARATOR}${name}`;
  if (joined.length <= MAX_UPSTREAM_NAME) return joined;
  const hash = createHash('sha256').update(joined).digest('hex').slice(0, 12);
  return `${joined.slice(0, MAX_UPSTREAM_NAME - hash.length - 1)}_${hash}`;
}

function parseTool<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = [field, ...(issue?.path ?? []).map(String)].join('.');
  throw new AppError('VALIDATION', `${at}: ${issue?.message ?? 'invalid'}`, { details: { field: at } });
}

function upstreamTool(name: string, tool: z.infer<typeof functionTool>): UpstreamTool {
  return {
    type: 'function',
    function: {
      name,
      description: tool.description ?? '',
      parameters: tool.parameters ?? { type: 'object', properties: {} },
    },
  };
}

/**
 * The request's tools: `function` tools passed through, tools inside a `namespace` offered as `<namespace>__<name>`,
 * every other (hosted) type dropped and named in `ignored` (never a 400: Codex sends `web_search` by default). A name
 * offered twice, or one of our own tools' names, is a 400 naming it; a description over `maxDescriptionChars`
 * (MAX_CLIENT_TOOL_DESCRIPTION_CHARS) a 413.
 */
export function responseToolsOf(
  tools: readonly { type: string }[],
  serverToolNames: ReadonlySet<string>,
  maxDescriptionChars = DEFAULT_MAX_TOOL_DESCRIPTION_CHARS,
): ResponseTools {
  const result: ResponseTools = { tools: [], names: new Map(), ignored: [] };
  const offer = (field: string, upstream: string, tool: z.infer<typeof functionTool>, namespace?: string) => {
    if (result.names.has(upstream) || serverToolNames.has(upstream))
      throw new AppError(
        'VALIDATION',
        `${field}.name: "${upstream}" is ${result.names.has(upstream) ? 'offered twice' : "the name of one of this server's tools; rename yours"}.`,
        { details: { field: `${field}.name` } },
      );
    checkToolDescription(tool.description, maxDescriptionChars, `${field}.description`);
    result.names.set(upstream, namespace === undefined ? { name: tool.name } : { name: tool.name, namespace });
    result.tools.push(upstreamTool(upstream, tool));
  };
  const ignore = (type: string) => {
    if (!result.ignored.includes(type)) result.ignored.push(type);
  };
  tools.forEach((tool, index) => {
    const field = `tools.${index}`;
    if (tool.type === 'function') {
      const parsed = parseTool(functionTool, tool, field);
      offer(field, parsed.name, parsed);
    } else if (tool.type === 'namespace') {
      const namespace = parseTool(namespaceTool, tool, field);
      checkToolDescription(namespace.description, maxDescriptionChars, `${field}.description`);
      namespace.tools.forEach((inner, innerIndex) => {
        const innerField = `${field}.tools.${innerIndex}`;
        if (inner.type !== 'function') return ignore(`${namespace.name}.${inner.type}`);
        const parsed = parseTool(functionTool, inner, innerField);
        offer(innerField, upstreamNameOf(namespace.name, parsed.name), parsed, namespace.name);
      });
    } else ignore(tool.type);
  });
  return result;
}
