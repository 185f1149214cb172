import { Router } from 'express';
import { periodResetsAt, periodStartDay } from '../../core/spend/spend-period';
import type { SpendUsageDto } from '../../shared/api';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';

/** GET /api/me/usage: the caller's spending against their spend limit (issue 35). */
export function usageRoutes(deps: HttpDeps): Router {
  const router = Router();
  router.get('/me/usage', async (_request, response) => {
    const { userId } = principalOf(response);
    if (!deps.spend) {
      const now = new Date();
      const body: SpendUsageDto = {
        enforced: false,
        unit: 'tokens',
        spent: 0,
        reserved: 0,
        limit: null,
        remaining: null,
        period: 'day',
        periodStart: periodStartDay('day', now, 'UTC'),
        resetsAt: periodResetsAt('day', now, 'UTC').toISOString(),
        perSend: null,
      };
      response.json(body);
      return;
    }
    const usage = await deps.spend.usageOf(userId);
    const body: SpendUsageDto = {
      enforced: true,
      unit: usage.unit,
      spent: usage.spent,
      reserved: usage.reserved,
      limit: usage.limit,
      remaining: usage.remaining,
      period: usage.period,
      periodStart: usage.periodStart,
      resetsAt: usage.resetsAt,
      perSend: usage.limit === null ? null : usage.perSend,
    };
    response.json(body);
  });
  return router;
}
