import type { Express } from 'express';
import type { OpenApiDocument } from '../../src/http/openapi/openapi-document';
import { expressRoutes } from './express-routes';

/** One served route, as `METHOD /path/{param}`, split. */
export interface ServedRoute {
  method: string;
  path: string;
  /** `METHOD /path/{param}`: how failures name it. */
  name: string;
}

/** Who may call a route: decided by its path, so that a route added later falls in the strictest class that fits. */
export type RouteClass = 'public' | 'admin' | 'runner' | 'user';

/**
 * Routes anyone may call (probes, the API's description, guest sign-in), and the admin session routes (their POST
 * carries the credential in its body; their DELETE only clears the caller's own cookie). Every other route is a user
 * route unless its path makes it an admin or runner route: a new route is tested as needing credentials by default.
 */
const PUBLIC_ROUTES = new Set([
  'GET /healthz',
  'GET /readyz',
  'GET /api/info',
  'GET /api/openapi.json',
  'POST /api/auth/guest',
  'POST /api/admin/session',
  'DELETE /api/admin/session',
  // Behind METRICS_TOKEN (or ADMIN_TOKEN), tested in test/ops/metrics.int.test.ts.
  'GET /metrics',
]);

/** Runners' callbacks: signed with the runner's secret, not a bearer token (test/tools/external-runners). */
const RUNNER_ROUTES = new Set(['POST /api/tool-runs/{id}/progress', 'POST /api/tool-runs/{id}/result']);

export function classifyRoute(route: ServedRoute): RouteClass {
  if (PUBLIC_ROUTES.has(route.name)) return 'public';
  if (RUNNER_ROUTES.has(route.name)) return 'runner';
  if (route.path.startsWith('/api/admin/') || route.path.startsWith('/admin/')) return 'admin';
  return 'user';
}

/** Every route the app serves, and the mount point of each mounted app (bull-board's dashboard). */
export function servedRoutes(app: Express): ServedRoute[] {
  return expressRoutes(app, { mountedApps: true }).map((name) => {
    const [method = '', path = ''] = name.split(' ');
    return { method, path, name };
  });
}

/** The path parameters of a route, each with the path segment before it (`threads/{id}`, `messages/{messageId}`). */
export function pathParameters(path: string): string[] {
  const segments = path.split('/');
  return segments.flatMap((segment, index) =>
    /^\{\w+\}$/.test(segment) ? [`${segments[index - 1] ?? ''}/${segment}`] : [],
  );
}

/**
 * Fills a route's path parameters from `values` (keyed as pathParameters names them); throws naming the route and
 * the parameter when one has no value, so a route added with a new kind of parameter fails until it gets a filler.
 */
export function fillPath(route: ServedRoute, values: Record<string, string>): string {
  const segments = route.path.split('/');
  return segments
    .map((segment, index) => {
      if (!/^\{\w+\}$/.test(segment)) return segment;
      const key = `${segments[index - 1] ?? ''}/${segment}`;
      const value = values[key];
      if (value === undefined)
        throw new Error(
          `${route.name}: no way to fill its parameter ${key}; add a filler for it in the route-table tests`,
        );
      return encodeURIComponent(value);
    })
    .join('/');
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  format?: string;
  minimum?: number;
  minLength?: number;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  $ref?: string;
};

/**
 * A smallest valid value of a JSON schema of the OpenAPI document: required properties only, uuids from `uuid`,
 * strings from `text`. A stranger's request is then refused for whose object it names, not for its shape.
 */
export function sampleOf(schema: JsonSchema, fill: { uuid: string; text: string }): unknown {
  const first = schema.oneOf?.[0] ?? schema.anyOf?.[0];
  if (first) return sampleOf(first, fill);
  if (schema.enum) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((each) => each !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((name) => [name, sampleOf(schema.properties?.[name] ?? {}, fill)]),
      );
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'string':
      return schema.format === 'uuid' ? fill.uuid : fill.text.padEnd(schema.minLength ?? 0, '.');
    default:
      return {};
  }
}

/** What the OpenAPI document says of a route: its body schema, required query parameters, documented statuses. */
export function documented(
  document: OpenApiDocument,
  route: ServedRoute,
): { body?: JsonSchema; requiredQuery: string[]; statuses: string[] } | undefined {
  const operation = (document.paths?.[route.path] as Record<string, unknown> | undefined)?.[
    route.method.toLowerCase()
  ] as
    | {
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
        parameters?: { name: string; in: string; required?: boolean }[];
        responses?: Record<string, unknown>;
      }
    | undefined;
  if (!operation) return undefined;
  return {
    body: operation.requestBody?.content?.['application/json']?.schema,
    requiredQuery: (operation.parameters ?? [])
      .filter((parameter) => parameter.in === 'query' && parameter.required)
      .map((parameter) => parameter.name),
    statuses: Object.keys(operation.responses ?? {}),
  };
}
