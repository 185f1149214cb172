import type { RequestHandler } from 'express';
import { AppError } from '../../core/errors/app-error';
import type { AdminPrincipal } from './admin-auth';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The host (and port) an Origin header names, or null when it is not an http(s) origin. */
function originHost(origin: string): string | null {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.host.toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * After admin auth: a change made with the session cookie (any method but GET/HEAD/OPTIONS, bodyless POSTs such as
 * summarize and rebuild included) must carry an `Origin` of this server's own host. Browsers always send it on such
 * requests, so the admin console works and another site cannot make the admin's browser act (on top of the cookie's
 * SameSite=Strict). Bearer-token callers (scripts) are not browsers riding a cookie: no Origin is needed.
 */
export const requireSameOriginForCookieChanges: RequestHandler = (request, response, next) => {
  const admin = response.locals.admin as AdminPrincipal | undefined;
  if (!admin || admin.via !== 'session' || SAFE_METHODS.has(request.method)) return next();
  const origin = request.headers.origin;
  // request.host honours X-Forwarded-Host only from a proxy trusted by TRUST_PROXY.
  const host = request.host?.toLowerCase();
  if (typeof origin === 'string' && host && originHost(origin) === host) return next();
  next(
    new AppError(
      'FORBIDDEN',
      "An admin change made with the session cookie must come from this server's own pages (same-origin Origin header).",
    ),
  );
};
