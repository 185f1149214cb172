import { Router } from 'express';
import type { ModelCallHistory } from '../../db/model-call-history';
import { parseOrThrow, threadIdParams } from '../request-schemas';

/**
 * `GET /api/admin/threads/:id/model-calls` → `{ calls: ModelCallPointDto[] }`: tokens per model call of a
 * thread (the prompt against the transcript so far), for the admin console's chart. Mounted behind admin auth.
 */
export function adminCallsRoutes(deps: { modelCalls: ModelCallHistory }): Router {
  const router = Router();
  router.get('/admin/threads/:id/model-calls', async (request, response) => {
    const { id } = parseOrThrow(threadIdParams, request.params, 'path');
    response.json({ calls: await deps.modelCalls.listForThread(id) });
  });
  return router;
}
