import { Router } from 'express';
import { toAuditEntryDto } from '../../core/admin-dto';
import type { AuditPageDto, QueueListDto } from '../../shared/admin-api';
import type { HttpDeps } from '../http-deps';
import { parseOrThrow } from '../request-schemas';
import { auditQuery } from './admin-request-schemas';
import { onQueue } from './on-queue';

/** Queue counts, the token estimate's correction, the tools and the audit trail. */
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

  router.get('/admin/audit', async (request, response) => {
    const query = parseOrThrow(auditQuery, request.query, 'query');
    const page = await deps.admin.audit.list({ limit: query.limit, ...(query.threadId ? { threadId: query.threadId } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) });
    const body: AuditPageDto = { entries: page.items.map(toAuditEntryDto), nextCursor: page.nextCursor };
    response.json(body);
  });

  return router;
}
