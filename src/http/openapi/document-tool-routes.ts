import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { toolRunParams } from '../request-schemas';
import { runnerProgressBody, runnerResultBody } from '../routes/tool-callback-routes';
import { errors, json, RUNNER_SIGNATURE } from './openapi-helpers';

const signed: Record<string, string[]>[] = [{ [RUNNER_SIGNATURE]: [] }];
const callbackAnswer = z.object({ ok: z.literal(true), duplicate: z.boolean(), status: z.string() });
const signatureHeaders = z.object({
  'x-tool-timestamp': z.string().describe('Unix milliseconds; within 5 minutes of the server\'s clock'),
  'x-tool-signature': z.string().describe('`sha256=` + hex HMAC-SHA256 of `<timestamp>.<raw body>` with TOOL_WEBHOOK_SECRET'),
});

/** External runners' callbacks (signed, no bearer token). */
export function documentToolRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post', path: '/api/tool-runs/{id}/progress', tags: ['tools'], security: signed,
    summary: 'An external runner reports progress (signed with TOOL_WEBHOOK_SECRET; a replayed request is refused)',
    request: { params: toolRunParams, headers: signatureHeaders, body: { content: { 'application/json': { schema: runnerProgressBody } } } },
    responses: { 202: json(callbackAnswer, 'Saved and streamed to the thread'), ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT') },
  });
  registry.registerPath({
    method: 'post', path: '/api/tool-runs/{id}/result', tags: ['tools'], security: signed,
    summary: 'An external runner reports its result (signed; repeated results are ignored; 409 after a timeout or cancel)',
    request: { params: toolRunParams, headers: signatureHeaders, body: { content: { 'application/json': { schema: runnerResultBody } } } },
    responses: { 200: json(callbackAnswer, 'Accepted (`duplicate: true` when it was already received)'), ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT') },
  });
}
