import { z } from 'zod';
import type { OpenApiDocument } from '../../src/http/openapi/openapi-document';

type Json = Record<string, unknown>;

/** Replaces `$ref`s to components with the components themselves (our schemas are not recursive). */
function inlineRefs(node: unknown, schemas: Json, depth = 0): unknown {
  if (depth > 50) throw new Error('recursive schema');
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, schemas, depth + 1));
  if (node && typeof node === 'object') {
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      const target = schemas[ref.replace('#/components/schemas/', '')];
      if (!target) throw new Error(`unresolved ${ref}`);
      return inlineRefs(target, schemas, depth + 1);
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlineRefs(value, schemas, depth + 1)]));
  }
  return node;
}

/**
 * Checks a real response against the document: its status must be documented for the operation, and a JSON body
 * must match the documented schema (converted from the document's JSON Schema, not taken from our zod sources).
 * Returns the problems found, empty when the response agrees.
 */
export async function responseProblems(
  document: OpenApiDocument,
  operation: { method: string; path: string },
  response: Response,
): Promise<string[]> {
  const where = `${operation.method.toUpperCase()} ${operation.path} -> ${response.status}`;
  const item = document.paths?.[operation.path] as Json | undefined;
  const documented = (item?.[operation.method.toLowerCase()] as { responses?: Json } | undefined)?.responses;
  if (!documented) return [`${where}: the operation is not documented`];
  const entry = documented[String(response.status)] as { content?: Record<string, { schema?: unknown }> } | undefined;
  if (!entry) return [`${where}: status not documented (documented: ${Object.keys(documented).join(', ')})`];
  const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  if (!entry.content)
    return response.status === 204 || type === '' ? [] : [`${where}: documented without a body, got ${type}`];
  const media = entry.content[type];
  if (!media) return [`${where}: content type ${type} not documented`];
  if (type !== 'application/json') return [];
  const schema = z.fromJSONSchema(inlineRefs(media.schema, (document.components?.schemas ?? {}) as Json) as never);
  const parsed = schema.safeParse(await response.json());
  return parsed.success
    ? []
    : parsed.error.issues.slice(0, 5).map((issue) => `${where}: ${issue.path.join('.')}: ${issue.message}`);
}
