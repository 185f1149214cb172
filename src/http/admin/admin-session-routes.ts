import { Router } from 'express';
import { AppError } from '../../core/errors/app-error';
import type { AdminSessionDto } from '../../shared/admin-api';
import { clientKeyOf } from '../client-address';
import type { HttpDeps } from '../http-deps';
import { parseOrThrow } from '../request-schemas';
import { ADMIN_SESSION_COOKIE } from './admin-auth';
import { adminSessionBody } from './admin-request-schemas';

/**
 * The browser's admin session: `POST /api/admin/session {token}` (ADMIN_TOKEN or an admin JWT) sets the session
 * cookie; `DELETE` clears it. Neither needs prior admin auth: the POST carries the credential in its body, and the
 * DELETE only removes the caller's own cookie.
 */
export function adminSessionRoutes(deps: HttpDeps): Router {
  const router = Router();
  const { auth, audit } = deps.admin;

  router.post('/admin/session', async (request, response) => {
    const limited = await deps.rateLimits.adminSignIn.hit(clientKeyOf(request));
    if (!limited.allowed) {
      throw new AppError('RATE_LIMITED', `Too many sign-in attempts; try again in ${limited.retryAfterSeconds} s.`, {
        details: { retryAfterSeconds: limited.retryAfterSeconds },
      });
    }
    const body = parseOrThrow(adminSessionBody, request.body, 'session');
    const principal = await auth.verifyCredentialFrom(request, body.token);
    const session = await auth.issueSession(principal);
    response.cookie(ADMIN_SESSION_COOKIE, session.value, auth.cookieOptions(request, session.expiresAt));
    await audit.record({
      actor: principal.actor,
      action: 'admin.session-started',
      threadId: null,
      details: { via: principal.via },
    });
    const dto: AdminSessionDto = { actor: principal.actor, expiresAt: session.expiresAt.toISOString() };
    response.status(201).json(dto);
  });

  router.delete('/admin/session', async (request, response) => {
    const cookie = (request.cookies as Record<string, unknown> | undefined)?.[ADMIN_SESSION_COOKIE];
    const principal = typeof cookie === 'string' ? await auth.verifySession(cookie).catch(() => null) : null;
    response.clearCookie(ADMIN_SESSION_COOKIE, auth.cookieOptions(request));
    if (principal) await audit.record({ actor: principal.actor, action: 'admin.session-ended', threadId: null });
    response.status(204).end();
  });

  return router;
}
