import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { CookieOptions, Request, RequestHandler, Response } from 'express';
import { SignJWT, jwtVerify } from 'jose';
import { AppError } from '../../core/errors/app-error';
import { refusedAfterErasure } from '../../core/erasure';
import type { ErasureStore } from '../../core/ports';
import type { RateLimiter } from '../../core/limits/rate-limiter';
import { bearerToken, type TokenService } from '../../auth/token-service';
import { clientKeyOf } from '../client-address';
import { withFailureLimit } from '../failed-auth-limit';

/** Who is acting as admin: a JWT's `sub`, or `admin-token` for the bootstrap ADMIN_TOKEN. */
export interface AdminPrincipal {
  actor: string;
  via: 'admin-token' | 'jwt' | 'session';
  /**
   * When the credential stops being valid (ms since the epoch): an admin JWT's `exp`. Absent for ADMIN_TOKEN (it is
   * valid until rotated). A session opened from a JWT never outlives it: the JWT is the only source of the role.
   */
  expiresAt?: number;
}

export const ADMIN_TOKEN_ACTOR = 'admin-token';
/** The admin session cookie (httpOnly, SameSite=Strict, Secure over https). */
export const ADMIN_SESSION_COOKIE = 'admin_session';
/** Default admin session life: 8 hours. */
export const ADMIN_SESSION_TTL_SECONDS = 8 * 3600;

const SESSION_AUDIENCE = 'admin-session';
const ALGORITHM = 'HS256';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Compares secrets in constant time (hashing first makes the lengths equal). */
function sameSecret(given: string, expected: string): boolean {
  return expected.length > 0 && timingSafeEqual(digest(given), digest(expected));
}

function unauthorized(
  message = 'Admin credentials are required (an admin bearer token or an admin session).',
): AppError {
  return new AppError('UNAUTHORIZED', message);
}

/**
 * Admin authentication: `Authorization: Bearer <ADMIN_TOKEN>` (compared in constant time), a bearer JWT with
 * `role: "admin"`, or the admin session cookie. The cookie holds an HS256 JWT of its own (key derived from
 * AUTH_SECRET, audience `admin-session`, expiring), never the raw token; a session opened with ADMIN_TOKEN names a
 * fingerprint of that token, so rotating ADMIN_TOKEN ends those sessions.
 */
export function createAdminAuth(options: {
  tokens: TokenService;
  adminToken: string;
  authSecret: string;
  sessionTtlSeconds?: number;
  /** Failed credentials per client address (AUTH_FAILURE_LIMIT_PER_MINUTE). */
  failures: RateLimiter;
  /** Production: the session cookie is `Secure` even when this process sees plain HTTP (TLS ends at a proxy). */
  secureCookies: boolean;
  /** Erasure tombstones: an erased admin's JWT issued before the erasure, and a session opened before it, are refused. */
  erasures: Pick<ErasureStore, 'erasureOf'>;
}) {
  const sessionKey = createHmac('sha256', options.authSecret).update('admin-session-v1').digest();
  const ttlSeconds = options.sessionTtlSeconds ?? ADMIN_SESSION_TTL_SECONDS;
  const tokenFingerprint = createHmac('sha256', sessionKey).update(options.adminToken).digest('base64url').slice(0, 22);

  /** As on /api: a tombstone refuses what was issued before it (a guest's, always). */
  async function refuseErased(userId: string, token: { issuedAtMs: number; kind: 'guest' | 'external' }) {
    if (refusedAfterErasure(await options.erasures.erasureOf(userId), token))
      throw unauthorized('This account was erased; sign in again.');
  }

  /** An admin credential as sent in a bearer header or in the session request's body. */
  async function verifyCredential(token: string): Promise<AdminPrincipal> {
    if (sameSecret(token, options.adminToken)) return { actor: ADMIN_TOKEN_ACTOR, via: 'admin-token' };
    const principal = await options.tokens.verify(token).catch(() => null);
    if (principal?.role !== 'admin') throw unauthorized();
    await refuseErased(principal.userId, { issuedAtMs: principal.issuedAt ?? 0, kind: principal.kind });
    return { actor: principal.userId, via: 'jwt', expiresAt: principal.expiresAt };
  }

  /** verifyCredential under the failed-credential limit of the request's client address. */
  function verifyCredentialFrom(request: Request, token: string): Promise<AdminPrincipal> {
    return withFailureLimit(options.failures, clientKeyOf(request), () => verifyCredential(token));
  }

  /**
   * Signs a session cookie value lasting the session TTL, capped at the credential's own expiry: a 5-minute admin
   * JWT opens at most a 5-minute session.
   */
  async function issueSession(principal: AdminPrincipal): Promise<{ value: string; expiresAt: Date }> {
    const sessionEnd = Date.now() + ttlSeconds * 1000;
    const expiresAt = new Date(
      principal.expiresAt === undefined ? sessionEnd : Math.min(sessionEnd, principal.expiresAt),
    );
    const value = await new SignJWT(principal.actor === ADMIN_TOKEN_ACTOR ? { tkh: tokenFingerprint } : {})
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(principal.actor)
      .setAudience(SESSION_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(sessionKey);
    return { value, expiresAt };
  }

  async function verifySession(value: string): Promise<AdminPrincipal> {
    const verified = await jwtVerify(value, sessionKey, { algorithms: [ALGORITHM], audience: SESSION_AUDIENCE }).catch(
      () => null,
    );
    const actor = verified?.payload.sub;
    if (!verified || typeof actor !== 'string' || actor.length === 0)
      throw unauthorized('The admin session has expired or is not valid.');
    if (actor === ADMIN_TOKEN_ACTOR && verified.payload.tkh !== tokenFingerprint)
      throw unauthorized('The admin session has expired or is not valid.');
    if (actor !== ADMIN_TOKEN_ACTOR)
      await refuseErased(actor, { issuedAtMs: (verified.payload.iat ?? 0) * 1000, kind: 'external' });
    return { actor, via: 'session' };
  }

  async function authenticateRequest(request: Request): Promise<AdminPrincipal> {
    const bearer = bearerToken(request.headers.authorization);
    if (bearer) return verifyCredentialFrom(request, bearer);
    const cookie = (request.cookies as Record<string, unknown> | undefined)?.[ADMIN_SESSION_COOKIE];
    if (typeof cookie === 'string' && cookie.length > 0) return verifySession(cookie);
    throw unauthorized();
  }

  /** Requires admin credentials; puts the AdminPrincipal in `response.locals.admin`. Needs cookie-parser before it. */
  const middleware: RequestHandler = (request, response, next) => {
    authenticateRequest(request).then((principal) => {
      response.locals.admin = principal;
      next();
    }, next);
  };

  function cookieOptions(request: Request, expiresAt?: Date): CookieOptions {
    return {
      httpOnly: true,
      sameSite: 'strict',
      secure: options.secureCookies || request.secure,
      path: '/',
      ...(expiresAt ? { expires: expiresAt } : {}),
    };
  }

  return { verifyCredential, verifyCredentialFrom, issueSession, verifySession, middleware, cookieOptions };
}

export type AdminAuth = ReturnType<typeof createAdminAuth>;

export function adminOf(response: Response): AdminPrincipal {
  const admin = response.locals.admin as AdminPrincipal | undefined;
  if (!admin) throw unauthorized();
  return admin;
}
