import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { toolRunParams } from '../request-schemas';
import { runnerProgressBody, runnerResultBody } from '../routes/tool-callback-routes';
import { ADMIN_SESSION, ADMIN_TOKEN, errors, json, RUNNER_SIGNATURE } from './openapi-helpers';

const signed: Record<string, string[]>[] = [{ [RUNNER_SIGNATURE]: [] }];
const callbackAnswer = z.object({ ok: z.literal(true), duplicate: z.boolean(), status: z.string() });
const signatureHeaders = z.object({
  'x-tool-timestamp': z.string().describe("Unix milliseconds; within 5 minutes of the server's clock"),
  'x-tool-signature': z
    .string()
    .describe(
      'Runner protocol v2: `v2=` + hex HMAC-SHA256 of `v2\\n<timestamp>\\n<METHOD>\\n<path>\\n<runId>\\n<raw body>` ' +
        "with the secret of the run's runner (its `secret` in EXTERNAL_TOOLS, else TOOL_WEBHOOK_SECRET); a v1 `sha256=` signature is refused (401)",
    ),
});

const tokenEstimateDto = z.object({
  model: z.string(),
  factor: z.number().min(1),
  maxFactor: z.number().min(1),
  observedRatio: z.number().nullable(),
  samples: z.number().int().nonnegative(),
});

const adminToolListDto = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      source: z.enum(['built-in', 'mcp', 'external']),
      server: z.string().nullable(),
      serverTool: z.string().nullable(),
      url: z.string().nullable(),
      mode: z.enum(['inline', 'async', 'external']),
      background: z.boolean(),
      offered: z.boolean(),
      schemaTokens: z.number().int(),
      serverState: z.string().nullable(),
    }),
  ),
  servers: z.array(
    z.object({
      name: z.string(),
      transport: z.enum(['stdio', 'http']),
      state: z.string(),
      tools: z.number().int(),
      restarts: z.number().int(),
      lastError: z.string().nullable(),
      supportsTasks: z.boolean(),
    }),
  ),
});

/** External runners' callbacks (signed, no bearer token) and the admin's tool list. */
export function documentToolRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/admin/token-estimate',
    tags: ['admin'],
    security: [{ [ADMIN_TOKEN]: [] }, { [ADMIN_SESSION]: [] }],
    summary:
      "The chat model's prompt-token estimate against the provider's reported counts, and the correction applied",
    description:
      'Each chat call with a usage report moves a weighted mean of reported ÷ estimated prompt tokens. Clamped to [1, maxFactor], it multiplies every estimate of the budget guard and the fold trigger: it only ever makes estimates larger.',
    responses: { 200: json(tokenEstimateDto, 'The correction'), ...errors('UNAUTHORIZED') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/tools',
    tags: ['admin'],
    security: [{ [ADMIN_TOKEN]: [] }, { [ADMIN_SESSION]: [] }],
    summary:
      'Every tool with its source (built-in, MCP server, external runner), mode, schema cost and MCP server state',
    responses: { 200: json(adminToolListDto, 'The tools and the MCP servers'), ...errors('UNAUTHORIZED') },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/tool-runs/{id}/progress',
    tags: ['tools'],
    security: signed,
    summary: "An external runner reports progress (signed with its runner's secret; a replayed request is refused)",
    request: {
      params: toolRunParams,
      headers: signatureHeaders,
      body: { content: { 'application/json': { schema: runnerProgressBody } } },
    },
    responses: {
      202: json(callbackAnswer, 'Saved and streamed to the thread'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/tool-runs/{id}/result',
    tags: ['tools'],
    security: signed,
    summary:
      'An external runner reports its result (signed; repeated results are ignored; 409 after a timeout or cancel)',
    description:
      'The body may hold a result of TOOL_RESULT_MAX_CHARS characters (this route has its own body limit); a longer `result` is VALIDATION. ' +
      'A signature counts as used only once its report is accepted: a refused report may be sent again as it was.',
    request: {
      params: toolRunParams,
      headers: signatureHeaders,
      body: { content: { 'application/json': { schema: runnerResultBody } } },
    },
    responses: {
      200: json(callbackAnswer, 'Accepted (`duplicate: true` when it was already received)'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT'),
    },
  });
}
