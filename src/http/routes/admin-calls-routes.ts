import { Router } from 'express';
import type { ModelCallHistory } from '../../db/model-call-history';
import type { ModelCallListDto } from '../../shared/api';
import { parseOrThrow, threadIdParams } from '../request-schemas';

/**
 * `GET /api/admin/threads/:id/model-calls` → `ModelCallListDto`: tokens per model call of a
 * thread (the prompt against the transcript so far), for the admin console's chart. Mounted behind admin auth.
 */
export function adminCallsRoutes(deps: { modelCalls: ModelCallHistory }): Router {
  const router = Router();
  router.get('/admin/threads/:id/model-calls', async (request, response) => {
    const { id } = parseOrThrow(threadIdParams, request.params, 'path');
    const body: ModelCallListDto = { calls: await deps.modelCalls.listForThread(id) };
    response.json(body);
  });
  return router;
}
