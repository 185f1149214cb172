import { Router } from 'express';
import { toAuditEntryDto } from '../../core/admin/admin-dto';
import { costRow } from '../../core/costs/estimate-costs';
import { localDay, startOfLocalDay } from '../../core/spend/spend-period';
import type { AuditPageDto, CostReportDto, CostRowDto, QueueListDto } from '../../shared/admin-api';
import type { HttpDeps } from '../http-deps';
import { parseOrThrow } from '../request-schemas';
import { auditQuery, costsQuery } from './admin-request-schemas';
import { onQueue } from './on-queue';

/** Queue counts, the token estimate's correction, the tools, the estimated costs and the audit trail. */
export function adminOpsRoutes(deps: HttpDeps): Router {
  const router = Router();

  router.get('/admin/queues', async (_request, response) => {
    const body: QueueListDto = { queues: await onQueue(() => deps.admin.queues.counts()) };
    response.json(body);
  });

  router.get('/admin/token-estimate', (_request, response) => {
    response.json(deps.admin.tokenEstimate());
  });

  router.get('/admin/tools', (_request, response) => {
    response.json(deps.admin.tools());
  });

  router.get('/admin/costs', async (request, response) => {
    const query = parseOrThrow(costsQuery, request.query, 'query');
    const { report, prices, timeZone = 'UTC' } = deps.admin.costs;
    // The first of the last `days` days of the deployment's time zone (the spend periods' days), today included.
    const today = localDay(new Date(), timeZone);
    const first = new Date(Date.parse(`${today}T00:00:00Z`) - (query.days - 1) * 86_400_000).toISOString().slice(0, 10);
    const since = startOfLocalDay(first, timeZone);
    const { groups, total: totalUsage } = await report.usageBy({ by: query.by, since, limit: query.limit });
    const rows: CostRowDto[] = groups.map((group) => costRow(group, prices));
    const { limitOf } = deps.admin.costs;
    if (query.by === 'user' && limitOf) {
      // At most `limit` (500) users, one small statement each: the admin's panel shows each user's limit by their costs.
      const limits = await Promise.all(rows.map((row) => (row.key ? limitOf(row.key) : Promise.resolve(null))));
      rows.forEach((row, index) => (row.limit = limits[index] ?? null));
    }
    // Days newest first; users and threads by what they cost (then by prompt tokens, which unpriced models have too).
    rows.sort(
      query.by === 'day'
        ? (a, b) => b.key.localeCompare(a.key)
        : (a, b) => (b.cost ?? 0) - (a.cost ?? 0) || b.promptTokens - a.promptTokens,
    );
    const { key: _key, label: _label, ...total } = costRow({ key: '', label: '', usage: totalUsage }, prices);
    const body: CostReportDto = {
      by: query.by,
      since: since.toISOString(),
      pricedModels: Object.keys(prices),
      rows,
      total,
    };
    response.json(body);
  });

  router.get('/admin/audit', async (request, response) => {
    const query = parseOrThrow(auditQuery, request.query, 'query');
    const page = await deps.admin.audit.list({
      limit: query.limit,
      ...(query.threadId ? { threadId: query.threadId } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    const body: AuditPageDto = { entries: page.items.map(toAuditEntryDto), nextCursor: page.nextCursor };
    response.json(body);
  });

  return router;
}
