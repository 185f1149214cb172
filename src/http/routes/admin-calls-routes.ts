import { Router } from 'express';
import type { ModelCallHistory } from '../../core/ports';
import type { ModelCallListDto } from '../../shared/api';
import { modelCallsQuery } from '../admin/admin-request-schemas';
import { parseOrThrow, threadIdParams } from '../request-schemas';

/**
 * `GET /api/admin/threads/:id/model-calls?before=&limit=` → `ModelCallListDto`: tokens per model call of a thread
 * (the prompt against the transcript so far), the newest first paged back, for the admin console's chart.
 * Mounted behind admin auth.
 */
export function adminCallsRoutes(deps: { modelCalls: ModelCallHistory }): Router {
  const router = Router();
  router.get('/admin/threads/:id/model-calls', async (request, response) => {
    const { id } = parseOrThrow(threadIdParams, request.params, 'path');
    const query = parseOrThrow(modelCallsQuery, request.query, 'query');
    const body: ModelCallListDto = await deps.modelCalls.listForThread({
      threadId: id,
      limit: query.limit,
      ...(query.before ? { before: query.before } : {}),
    });
    response.json(body);
  });
  return router;
}
