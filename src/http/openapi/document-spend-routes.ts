import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { SpendLimitsDto } from '../../shared/admin-api';
import type { SpendUsageDto } from '../../shared/api';
import { groupBody, groupParams, serviceKeyParams, userLimitBody } from '../admin/admin-request-schemas';
import { adminUserParams } from '../admin/admin-user-routes';
import { ADMIN_SESSION, ADMIN_TOKEN, BEARER, errors, json } from './openapi-helpers';

const period = z.enum(['day', 'week', 'month']);

export const spendUsageDto = z
  .strictObject({
    enforced: z.boolean(),
    unit: z.enum(['money', 'tokens']),
    spent: z.number(),
    reserved: z.number(),
    limit: z.number().nullable(),
    remaining: z.number().nullable(),
    period,
    periodStart: z.string(),
    resetsAt: z.string(),
    perSend: z.number().nullable(),
  })
  .meta({ id: 'SpendUsage' });

export const spendLimitsDto = z
  .strictObject({
    enforced: z.boolean(),
    timeZone: z.string(),
    defaults: z.strictObject({
      user: z.string().nullable(),
      guest: z.string().nullable(),
      guestsPerAddress: z.string().nullable(),
    }),
    users: z.array(z.strictObject({ userId: z.string(), limit: z.string(), updatedAt: z.string() })),
    groups: z.array(
      z.strictObject({
        name: z.string(),
        limit: z.string().nullable(),
        members: z.array(z.string()),
        updatedAt: z.string().nullable(),
      }),
    ),
    serviceKeys: z.array(
      z.strictObject({
        keyId: z.string(),
        configured: z.boolean(),
        limit: z.string().nullable(),
        updatedAt: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'SpendLimits' });

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type SpendSchemaAgreement = [
  Assert<Same<z.infer<typeof spendUsageDto>, SpendUsageDto>>,
  Assert<Same<z.infer<typeof spendLimitsDto>, SpendLimitsDto>>,
];

const admin: Record<string, string[]>[] = [{ [ADMIN_TOKEN]: [] }, { [ADMIN_SESSION]: [] }];

/** GET /api/me/usage and the admin's spend-limit routes (issue 35). */
// eslint-disable-next-line max-lines-per-function -- declarative data: the OpenAPI description of the spend routes
export function documentSpendRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/me/usage',
    tags: ['account'],
    security: [{ [BEARER]: [] }],
    summary: "The caller's spending against their spend limit in the current period, and when it resets",
    description:
      "Money in the price currency or tokens (`unit`, the limit's). `reserved` is what sends and calls in flight hold (their worst case, settled to the real usage when they end); `perSend` is what one more send holds: a send is refused SPEND_LIMIT_REACHED when `remaining` cannot carry it. `enforced: false`: the server enforces no spend limits.",
    responses: { 200: json(spendUsageDto, 'The usage'), ...errors('UNAUTHORIZED', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/admin/spend-limits',
    tags: ['admin'],
    security: admin,
    summary: 'The spend-limit defaults, every user limit, and every group with its limit and members',
    responses: { 200: json(spendLimitsDto, 'The limits'), ...errors('UNAUTHORIZED', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'put',
    path: '/api/admin/spend-limits/users/{userId}',
    tags: ['admin'],
    security: admin,
    summary: "Set a user's own spend limit (it wins over their groups' and the default); audited",
    request: { params: adminUserParams, body: { content: { 'application/json': { schema: userLimitBody } } } },
    responses: {
      200: json(z.strictObject({ userId: z.string(), limit: z.string() }), 'Set'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'CONFLICT', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/admin/spend-limits/users/{userId}',
    tags: ['admin'],
    security: admin,
    summary: "Remove a user's own spend limit (their groups' or the default applies again); audited",
    request: { params: adminUserParams },
    responses: { 204: { description: 'Removed' }, ...errors('UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'put',
    path: '/api/admin/spend-limits/service-keys/{keyId}',
    tags: ['admin'],
    security: admin,
    summary: "Set a service key's spend limit: all of its end users together spend from it; audited",
    description:
      "`keyId` is the short hash of the key that its end users' ids carry (`svc-<keyId>:<end user>`); GET /api/admin/spend-limits lists the configured keys'. Each end user's own limit (theirs, their groups', the default) still applies as well.",
    request: { params: serviceKeyParams, body: { content: { 'application/json': { schema: userLimitBody } } } },
    responses: {
      200: json(z.strictObject({ keyId: z.string(), limit: z.string() }), 'Set'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/admin/spend-limits/service-keys/{keyId}',
    tags: ['admin'],
    security: admin,
    summary: "Remove a service key's spend limit; audited",
    request: { params: serviceKeyParams },
    responses: { 204: { description: 'Removed' }, ...errors('UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'put',
    path: '/api/admin/spend-limits/groups/{name}',
    tags: ['admin'],
    security: admin,
    summary: 'Create or change a group: its limit (null: none) and, when given, its members; audited',
    description:
      "A member's effective limit is their own, else the largest of their groups' (by what it allows per day), else the default.",
    request: { params: groupParams, body: { content: { 'application/json': { schema: groupBody } } } },
    responses: {
      200: json(z.strictObject({ name: z.string(), limit: z.string().nullable() }), 'Set'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'CONFLICT', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/admin/spend-limits/groups/{name}',
    tags: ['admin'],
    security: admin,
    summary: 'Delete a group and its memberships; audited',
    request: { params: groupParams },
    responses: { 204: { description: 'Deleted' }, ...errors('UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED') },
  });
}
