import { Router, type RequestHandler } from 'express';
import type { ModelCallHistory } from '../../db/model-call-history';
import { parseOrThrow, threadIdParams } from '../request-schemas';

/**
 * `GET /api/admin/threads/:id/model-calls` → `{ calls: ModelCallPointDto[] }`: tokens per model call of a
 * thread (the prompt against the transcript so far), for the admin console's chart. Admins only.
 */
export function adminCallsRoutes(deps: { history: ModelCallHistory; requireAdmin: RequestHandler }): Router {
  const router = Router();
  router.get('/admin/threads/:id/model-calls', deps.requireAdmin, async (request, response) => {
    const { id } = parseOrThrow(threadIdParams, request.params, 'path');
    response.json({ calls: await deps.history.listForThread(id) });
  });
  return router;
}
