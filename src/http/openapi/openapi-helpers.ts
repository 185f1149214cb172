import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { ZodType } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../../shared/errors';
import { errorResponse } from './response-schemas';

/** Security requirement names of the document. */
export const BEARER = 'bearer';
export const ADMIN_TOKEN = 'adminBearer';
export const ADMIN_SESSION = 'adminSession';
export const METRICS_TOKEN = 'metricsBearer';
export const RUNNER_SIGNATURE = 'runnerSignature';

export function json(schema: ZodType, description: string): ResponseConfig {
  return { description, content: { 'application/json': { schema } } };
}

/** The error responses a route may give, one per status (codes sharing a status are listed together). */
export function errors(...codes: ErrorCode[]): Record<string, ResponseConfig> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [String(status), json(errorResponse, list.join(' or '))]),
  );
}

export function registerSecuritySchemes(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', BEARER, {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'HS256 JWT signed with AUTH_SECRET; `sub` is the user id (POST /api/auth/guest issues one).',
  });
  registry.registerComponent('securitySchemes', ADMIN_TOKEN, {
    type: 'http',
    scheme: 'bearer',
    description: 'The bootstrap ADMIN_TOKEN, or a JWT with `role: "admin"` (its `sub` names the admin).',
  });
  registry.registerComponent('securitySchemes', METRICS_TOKEN, {
    type: 'http',
    scheme: 'bearer',
    description: 'The METRICS_TOKEN, or the ADMIN_TOKEN when no METRICS_TOKEN is set (exactly; not a JWT).',
  });
  registry.registerComponent('securitySchemes', RUNNER_SIGNATURE, {
    type: 'apiKey',
    in: 'header',
    name: 'x-tool-signature',
    description:
      'External runners (protocol v2): `v2=` + hex HMAC-SHA256 of `v2\\n<x-tool-timestamp>\\n<METHOD>\\n<path>\\n<runId>\\n<raw body>` ' +
      "with the secret of the run's runner (its EXTERNAL_TOOLS `secret`, else TOOL_WEBHOOK_SECRET).",
  });
  registry.registerComponent('securitySchemes', ADMIN_SESSION, {
    type: 'apiKey',
    in: 'cookie',
    name: 'admin_session',
    description: 'Set by POST /api/admin/session.',
  });
}
