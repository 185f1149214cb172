import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { documentAdminRoutes, documentMetricsRoute } from './document-admin-routes';
import { documentFacadeRoutes } from './document-facade-routes';
import { documentResponsesRoutes } from './document-responses-routes';
import { documentMessagesRoutes } from './document-messages-routes';
import { documentForkRoutes } from './document-fork-routes';
import { documentMemoryRoutes } from './document-memory-routes';
import { documentAccountRoutes, documentSavedMemoryRoutes } from './document-saved-memory-routes';
import { documentUserRoutes } from './document-user-routes';
import { documentToolRoutes } from './document-tool-routes';
import { documentSpendRoutes } from './document-spend-routes';
import { json, registerSecuritySchemes } from './openapi-helpers';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/**
 * Documents every REST route. A part that adds routes adds a `document*Routes(registry)` next to these; the contract
 * test (test/http/openapi-contract.int.test.ts) fails when a registered express route is missing here, or the reverse.
 */
export function documentRoutes(registry: OpenAPIRegistry): void {
  registerSecuritySchemes(registry);
  registry.registerPath({
    method: 'get',
    path: '/api/openapi.json',
    tags: ['docs'],
    summary: 'This document',
    responses: { 200: json(z.record(z.string(), z.unknown()), 'The OpenAPI 3.1 document') },
  });
  documentUserRoutes(registry);
  documentMemoryRoutes(registry);
  documentSavedMemoryRoutes(registry);
  documentAccountRoutes(registry);
  documentForkRoutes(registry);
  documentToolRoutes(registry);
  documentAdminRoutes(registry);
  documentSpendRoutes(registry);
  documentMetricsRoute(registry);
  documentFacadeRoutes(registry);
  documentResponsesRoutes(registry);
  documentMessagesRoutes(registry);
}

let cached: OpenApiDocument | null = null;

/** The OpenAPI 3.1 document, generated from the request and response zod schemas (once per process). */
export function openApiDocument(): OpenApiDocument {
  if (cached) return cached;
  const registry = new OpenAPIRegistry();
  documentRoutes(registry);
  cached = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Split-context chat API',
      version: '1',
      description:
        'REST API of the chat server. Errors are `{ error: { code, message } }` with a code from one closed list. The realtime protocol is documented in docs/realtime.md.',
    },
  });
  return cached;
}
