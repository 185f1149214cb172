import { Router } from 'express';
import { z } from 'zod';
import type { HttpDeps } from '../http-deps';
import { parseOrThrow } from '../request-schemas';
import { adminOf } from './admin-auth';

/** A user id as tokens carry it (`sub`). */
export const adminUserParams = z.object({ userId: z.string().min(1).max(200) });

/** DELETE /api/admin/users/:userId: erases a user as DELETE /api/me does; audited with who and when, no content. */
export function adminUserRoutes(deps: HttpDeps): Router {
  const router = Router();
  router.delete('/admin/users/:userId', async (request, response) => {
    const { userId } = parseOrThrow(adminUserParams, request.params, 'path');
    // The kind is the stored user's; a user with no row is tombstoned as a host-minted one.
    await deps.eraseUser({ userId, kind: 'external' });
    await deps.admin.audit.record({
      actor: adminOf(response).actor,
      action: 'user.erased',
      threadId: null,
      details: { userId },
    });
    response.status(204).end();
  });
  return router;
}
