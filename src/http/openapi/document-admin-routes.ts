import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  adminSessionBody,
  adminThreadsQuery,
  auditQuery,
  correctSummaryBody,
  costsQuery,
  modelCallsQuery,
  summaryRevisionsQuery,
} from '../admin/admin-request-schemas';
import { messageIdParams, threadIdParams, threadSettingsBody } from '../request-schemas';
import { ADMIN_SESSION, ADMIN_TOKEN, METRICS_TOKEN, errors, json } from './openapi-helpers';
import {
  adminSessionDto,
  adminThreadDetailDto,
  adminThreadPageDto,
  auditPageDto,
  messageContextDto,
  modelCallListDto,
  queueListDto,
  summaryCorrectedDto,
  summaryJobAcceptedDto,
  summaryRevisionListDto,
  threadMemorySettingsDto,
} from './response-schemas';

const admin: Record<string, string[]>[] = [{ [ADMIN_TOKEN]: [] }, { [ADMIN_SESSION]: [] }];

const tokens = z.number().int().min(0);
const costFigures = {
  calls: tokens,
  promptTokens: tokens.describe('Reported prompt tokens; our estimate for calls without a usage report'),
  cachedTokens: tokens.describe(
    'Prompt tokens the provider reported as read from its cache (0 where none were reported)',
  ),
  cacheWriteTokens: tokens.describe(
    'Prompt tokens the provider reported as written to its cache (Claude), priced at cacheWrite (0 where none were reported)',
  ),
  completionTokens: tokens.describe(
    "Reported completion tokens; the answer's counted tokens for calls without a report",
  ),
  cost: z
    .number()
    .min(0)
    .nullable()
    .describe("Estimated cost of the calls of priced models, in MODEL_PRICES' currency; null when none is priced"),
  estimatedCalls: tokens.describe('Calls without a usage report: their tokens, and so their cost, are our estimate'),
  unpricedModels: z.array(z.string()),
  cachedShare: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe(
      'Cached ÷ prompt tokens of the calls whose provider reported both its prompt and its cached tokens (calls without a usage report, or without cached tokens in it, count in neither); null when no call reported them',
    ),
};
const costRowDto = z
  .strictObject({
    key: z.string().describe('The UTC day (YYYY-MM-DD), the user id or the thread id'),
    label: z.string(),
    ...costFigures,
    limit: z
      .string()
      .nullable()
      .optional()
      .describe(
        "Per user, when spend limits are enforced: the user's effective spend limit (`0.5/day`), null when none applies",
      ),
  })
  .meta({ id: 'CostRow' });
const costTotalDto = z
  .strictObject(costFigures)
  .describe("Every call of the period, including the groups `limit` left out, with the rows' rules")
  .meta({ id: 'CostTotal' });
const costReportDto = z
  .strictObject({
    by: z.enum(['day', 'user', 'thread']),
    since: z.string().datetime(),
    pricedModels: z.array(z.string()),
    rows: z.array(costRowDto),
    total: costTotalDto,
  })
  .meta({ id: 'CostReport' });

/** The admin API. Every route but the session routes answers 401 without admin credentials. */
// eslint-disable-next-line max-lines-per-function -- declarative data: the OpenAPI description of the admin routes
export function documentAdminRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/admin/session',
    tags: ['admin'],
    summary: 'Open an admin session (sets the httpOnly admin_session cookie)',
    description:
      'The session lasts 8 hours, never past the `exp` of the admin JWT that opened it (`expiresAt` says when it ends).',
    request: { body: { content: { 'application/json': { schema: adminSessionBody } } } },
    responses: { 201: json(adminSessionDto, 'The session'), ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/admin/session',
    tags: ['admin'],
    summary: 'End the admin session (clears the cookie)',
    responses: { 204: { description: 'Ended' } },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/threads',
    tags: ['admin'],
    summary: "All users' threads with their context health",
    security: admin,
    request: { query: adminThreadsQuery },
    responses: {
      200: json(adminThreadPageDto, 'A page of threads'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/threads/{id}',
    tags: ['admin'],
    summary: 'Context state, pack preview, transcript size and revisions',
    security: admin,
    request: { params: threadIdParams },
    responses: {
      200: json(adminThreadDetailDto, 'The thread'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED', 'NOT_FOUND'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/threads/{id}/summaries',
    tags: ['admin'],
    summary: 'Summary revisions, each with a line diff against the previous one',
    security: admin,
    request: { params: threadIdParams, query: summaryRevisionsQuery },
    responses: {
      200: json(summaryRevisionListDto, 'Revisions, oldest first'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED', 'NOT_FOUND'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/admin/threads/{id}/summarize',
    tags: ['admin'],
    summary: 'Fold now (enqueues a forced fold)',
    security: admin,
    request: { params: threadIdParams },
    responses: {
      202: json(summaryJobAcceptedDto, 'Enqueued'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED', 'FORBIDDEN', 'NOT_FOUND', 'UNAVAILABLE'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/admin/threads/{id}/rebuild-summary',
    tags: ['admin'],
    security: admin,
    summary: 'Rebuild the summary from the transcript (a job; commits a revision authored `rebuild`)',
    request: { params: threadIdParams },
    responses: {
      202: json(summaryJobAcceptedDto, 'Enqueued'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'UNAVAILABLE'),
    },
  });
  registry.registerPath({
    method: 'put',
    path: '/api/admin/threads/{id}/summary',
    tags: ['admin'],
    security: admin,
    summary: 'Correct the summary: a new revision authored `admin` with the same coverage; later folds build on it',
    request: { params: threadIdParams, body: { content: { 'application/json': { schema: correctSummaryBody } } } },
    responses: {
      200: json(summaryCorrectedDto, 'The new revision'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'TOO_LARGE'),
    },
  });
  registry.registerPath({
    method: 'patch',
    path: '/api/admin/threads/{id}/settings',
    tags: ['admin'],
    security: admin,
    summary: "Change any thread's memory settings: trigger, keep, memory mode and the summary prompt (audited)",
    request: { params: threadIdParams, body: { content: { 'application/json': { schema: threadSettingsBody } } } },
    responses: {
      200: json(threadMemorySettingsDto, 'The settings after the change'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED', 'FORBIDDEN', 'NOT_FOUND'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/threads/{id}/model-calls',
    tags: ['admin'],
    security: admin,
    summary:
      'Tokens per model call of a thread (the prompt against the transcript so far): the newest calls, paged back with `before`',
    description:
      "For the admin console's chart: chat, summary and condense calls, oldest first within the page. `promptTokens` is the provider's reported figure where it reported usage, else our estimate (`promptTokensSource` says which). A thread without calls (or no such thread) has none.",
    request: { params: threadIdParams, query: modelCallsQuery },
    responses: { 200: json(modelCallListDto, 'The calls'), ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/threads/{id}/messages/{messageId}/context',
    tags: ['admin'],
    security: admin,
    summary:
      'What the model was given for one answer of any thread (as `GET /api/threads/{id}/messages/{messageId}/context`)',
    request: { params: messageIdParams },
    responses: {
      200: json(messageContextDto, 'What the model saw'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED', 'NOT_FOUND'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/queues',
    tags: ['admin'],
    summary: 'Job counts of the summary queue and any other registered queue',
    security: admin,
    responses: { 200: json(queueListDto, 'Counts'), ...errors('UNAUTHORIZED', 'RATE_LIMITED', 'UNAVAILABLE') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/costs',
    tags: ['admin'],
    security: admin,
    summary:
      'Estimated cost of the model calls per day (of SPEND_LIMIT_TIMEZONE, UTC by default), user or thread, from reported usage and MODEL_PRICES',
    description:
      "Uncached prompt tokens at the input price, cached ones (as the provider reported them) at the cached-input price, completions at the output price. Calls without a usage report count our estimate and are counted in `estimatedCalls`. Models without a price show tokens only. `cachedShare` is the provider prompt cache's share of the prompt tokens of the calls that reported their cached tokens: a call without a usage report does not dilute it. `total` covers every call of the period.",
    request: { query: costsQuery },
    responses: {
      200: json(costReportDto, 'The groups, days newest first, users and threads costliest first'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/audit',
    tags: ['admin'],
    summary: "The audit trail of admin writes and of admins' reads of users' settings and contexts, newest first",
    security: admin,
    request: { query: auditQuery },
    responses: {
      200: json(auditPageDto, 'A page of audit entries'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED'),
    },
  });
}

/** `GET /metrics`: Prometheus' text format, outside /api, for the metrics token only (no session, no JWT). */
export function documentMetricsRoute(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/metrics',
    tags: ['ops'],
    summary: 'Prometheus metrics',
    security: [{ [METRICS_TOKEN]: [] }],
    description:
      'Process, HTTP, turn, fold, queue and socket metrics in the Prometheus text exposition format (`text/plain; version=0.0.4`). Each process serves its own.',
    responses: {
      200: { description: 'The metrics', content: { 'text/plain': { schema: z.string() } } },
      ...errors('UNAUTHORIZED', 'RATE_LIMITED'),
    },
  });
}
