import { Router, type Request, type Response } from 'express';
import { AppError } from '../../core/errors/app-error';
import { formatSpendLimit, parseSpendLimit, type SpendLimit } from '../../core/spend/spend-limit';
import type { SpendLimitsDto } from '../../shared/admin-api';
import type { HttpDeps } from '../http-deps';
import { parseOrThrow } from '../request-schemas';
import { adminOf } from './admin-auth';
import type { SpendLimitAdminDeps } from './admin-deps';
import { adminUserParams } from './admin-user-routes';
import { groupBody, groupParams, serviceKeyParams, userLimitBody } from './admin-request-schemas';

const written = (limit: SpendLimit | null) => (limit ? formatSpendLimit(limit) : null);

/** A limit as the admin wrote it: VALIDATION when malformed, or in money while a model in use has no price. */
function limitOf(text: string, deps: SpendLimitAdminDeps): SpendLimit {
  const parsed = parseSpendLimit(text);
  if (!parsed.ok) throw new AppError('VALIDATION', `limit: ${parsed.error}`, { details: { field: 'limit' } });
  if (parsed.limit.unit === 'money') {
    const unpriced = deps.models.find((model) => !deps.prices[model]);
    if (unpriced)
      throw new AppError(
        'VALIDATION',
        `limit: a money limit needs a price for every model in use, and MODEL_PRICES has none for "${unpriced}"; write it in tokens (e.g. 200000tokens/day).`,
        { details: { field: 'limit' } },
      );
  }
  return parsed.limit;
}

function requireEnforced(deps: SpendLimitAdminDeps): void {
  if (!deps.enforced)
    throw new AppError(
      'CONFLICT',
      'Spend limits are off on this server (SPEND_LIMITS=off, or no SPEND_LIMIT_* default set): set SPEND_LIMITS=on first.',
    );
}

/** The configured service keys and those with a limit, in id order. */
function serviceKeysOf(
  limits: SpendLimitAdminDeps,
  stored: { keyId: string; limit: SpendLimit; updatedAt: Date }[],
): SpendLimitsDto['serviceKeys'] {
  const byId = new Map(stored.map((entry) => [entry.keyId, entry]));
  const ids = [...new Set([...limits.serviceKeyIds, ...byId.keys()])].sort();
  return ids.map((keyId) => ({
    keyId,
    configured: limits.serviceKeyIds.includes(keyId),
    limit: written(byId.get(keyId)?.limit ?? null),
    updatedAt: byId.get(keyId)?.updatedAt.toISOString() ?? null,
  }));
}

/** The spend limits' admin dependencies; NOT_FOUND (no such route) on a server without them. */
function spendLimitsOf(deps: HttpDeps): SpendLimitAdminDeps {
  const configured = deps.admin.spendLimits;
  if (!configured) throw new AppError('NOT_FOUND', 'No such route.');
  return configured;
}

/** GET /admin/spend-limits */
async function listSpendLimits(deps: HttpDeps, _request: Request, response: Response): Promise<void> {
  const limits = spendLimitsOf(deps);
  const listed = await limits.store.list();
  const body: SpendLimitsDto = {
    enforced: limits.enforced,
    timeZone: limits.timeZone,
    defaults: {
      user: written(limits.defaults.user),
      guest: written(limits.defaults.guest),
      guestsPerAddress: written(limits.defaults.guestsPerAddress),
    },
    users: listed.users.map((entry) => ({
      userId: entry.userId,
      limit: formatSpendLimit(entry.limit),
      updatedAt: entry.updatedAt.toISOString(),
    })),
    groups: listed.groups.map((group) => ({
      name: group.name,
      limit: written(group.limit),
      members: group.members,
      updatedAt: group.updatedAt?.toISOString() ?? null,
    })),
    serviceKeys: serviceKeysOf(limits, listed.serviceKeys),
  };
  response.json(body);
}

/** PUT /admin/spend-limits/users/:userId */
async function setUserLimit(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const limits = spendLimitsOf(deps);
  const { userId } = parseOrThrow(adminUserParams, request.params, 'path');
  const body = parseOrThrow(userLimitBody, request.body, 'body');
  const limit = limitOf(body.limit, limits);
  requireEnforced(limits);
  await limits.store.setUserLimit(userId, limit);
  await deps.admin.audit.record({
    actor: adminOf(response).actor,
    action: 'spend-limit.user-set',
    threadId: null,
    details: { userId, limit: formatSpendLimit(limit) },
  });
  response.json({ userId, limit: formatSpendLimit(limit) });
}

/** DELETE /admin/spend-limits/users/:userId */
async function removeUserLimit(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const limits = spendLimitsOf(deps);
  const { userId } = parseOrThrow(adminUserParams, request.params, 'path');
  if (!(await limits.store.deleteUserLimit(userId))) throw new AppError('NOT_FOUND', 'This user has no limit.');
  await deps.admin.audit.record({
    actor: adminOf(response).actor,
    action: 'spend-limit.user-removed',
    threadId: null,
    details: { userId },
  });
  response.status(204).end();
}

/** PUT /admin/spend-limits/service-keys/:keyId */
async function setServiceKeyLimit(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const limits = spendLimitsOf(deps);
  const { keyId } = parseOrThrow(serviceKeyParams, request.params, 'path');
  const body = parseOrThrow(userLimitBody, request.body, 'body');
  const limit = limitOf(body.limit, limits);
  requireEnforced(limits);
  if (!limits.serviceKeyIds.includes(keyId))
    throw new AppError('NOT_FOUND', 'No configured service key has this id (GET /api/admin/spend-limits lists them).');
  await limits.store.setServiceKeyLimit(keyId, limit);
  await deps.admin.audit.record({
    actor: adminOf(response).actor,
    action: 'spend-limit.service-key-set',
    threadId: null,
    details: { keyId, limit: formatSpendLimit(limit) },
  });
  response.json({ keyId, limit: formatSpendLimit(limit) });
}

/** DELETE /admin/spend-limits/service-keys/:keyId */
async function removeServiceKeyLimit(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const limits = spendLimitsOf(deps);
  const { keyId } = parseOrThrow(serviceKeyParams, request.params, 'path');
  if (!(await limits.store.deleteServiceKeyLimit(keyId)))
    throw new AppError('NOT_FOUND', 'This service key has no limit.');
  await deps.admin.audit.record({
    actor: adminOf(response).actor,
    action: 'spend-limit.service-key-removed',
    threadId: null,
    details: { keyId },
  });
  response.status(204).end();
}

/** PUT /admin/spend-limits/groups/:name */
async function setGroupLimit(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const limits = spendLimitsOf(deps);
  const { name } = parseOrThrow(groupParams, request.params, 'path');
  const body = parseOrThrow(groupBody, request.body, 'body');
  const limit = body.limit === null ? null : limitOf(body.limit, limits);
  requireEnforced(limits);
  await limits.store.setGroup({ name, limit, ...(body.members ? { members: body.members } : {}) });
  await deps.admin.audit.record({
    actor: adminOf(response).actor,
    action: 'spend-limit.group-set',
    threadId: null,
    details: { group: name, limit: written(limit), ...(body.members ? { members: body.members.length } : {}) },
  });
  response.json({ name, limit: written(limit) });
}

/** DELETE /admin/spend-limits/groups/:name */
async function removeGroupLimit(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const limits = spendLimitsOf(deps);
  const { name } = parseOrThrow(groupParams, request.params, 'path');
  if (!(await limits.store.deleteGroup(name))) throw new AppError('NOT_FOUND', 'No such group.');
  await deps.admin.audit.record({
    actor: adminOf(response).actor,
    action: 'spend-limit.group-removed',
    threadId: null,
    details: { group: name },
  });
  response.status(204).end();
}

/**
 * The admin's spend limits (issue 35): GET /api/admin/spend-limits lists the defaults and every limit set;
 * PUT/DELETE /api/admin/spend-limits/users/:userId, /groups/:name and /service-keys/:keyId set and remove them. Every
 * change is audited.
 */
export function adminSpendLimitRoutes(deps: HttpDeps): Router {
  const router = Router();
  router.get('/admin/spend-limits', (request, response) => listSpendLimits(deps, request, response));
  router.put('/admin/spend-limits/users/:userId', (request, response) => setUserLimit(deps, request, response));
  router.delete('/admin/spend-limits/users/:userId', (request, response) => removeUserLimit(deps, request, response));
  router.put('/admin/spend-limits/service-keys/:keyId', (request, response) =>
    setServiceKeyLimit(deps, request, response),
  );
  router.delete('/admin/spend-limits/service-keys/:keyId', (request, response) =>
    removeServiceKeyLimit(deps, request, response),
  );
  router.put('/admin/spend-limits/groups/:name', (request, response) => setGroupLimit(deps, request, response));
  router.delete('/admin/spend-limits/groups/:name', (request, response) => removeGroupLimit(deps, request, response));

  return router;
}
