import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { AppError } from '../core/errors';

export interface Principal {
  userId: string;
  role: 'user' | 'admin';
  kind: 'guest' | 'external';
}

const GUEST_TTL_SECONDS = 30 * 24 * 3600;
const ALGORITHM = 'HS256';

/**
 * Bearer tokens: HS256 JWTs (algorithm pinned) whose `sub` is the user id, signed with AUTH_SECRET, so a host
 * application can mint them. `role: "admin"` makes an admin. Guests get tokens from POST /api/auth/guest.
 */
export function createTokenService(secret: string) {
  const key = new TextEncoder().encode(secret);
  async function sign(principal: { userId: string; role?: 'admin'; kind: 'guest' | 'external' }, ttlSeconds = GUEST_TTL_SECONDS): Promise<string> {
    return new SignJWT({ kind: principal.kind, ...(principal.role ? { role: principal.role } : {}) })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(principal.userId)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(key);
  }
  async function verify(token: string): Promise<Principal> {
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: [ALGORITHM] });
      if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 200) {
        throw new AppError('UNAUTHORIZED', 'The token has no subject.');
      }
      return {
        userId: payload.sub,
        role: payload.role === 'admin' ? 'admin' : 'user',
        kind: payload.kind === 'guest' ? 'guest' : 'external',
      };
    } catch (error) {
      if (error instanceof AppError) throw error;
      const expired = error instanceof joseErrors.JWTExpired;
      throw new AppError('UNAUTHORIZED', expired ? 'The token has expired.' : 'The token is not valid.', { cause: error });
    }
  }
  return {
    sign,
    verify,
    issueGuest: async () => {
      const userId = `guest-${randomUUID()}`;
      return { userId, token: await sign({ userId, kind: 'guest' }) };
    },
    /** A fresh token for the same user (a returning guest keeps their threads). */
    refresh: async (principal: Principal) => ({
      userId: principal.userId,
      token: await sign({ userId: principal.userId, kind: principal.kind, ...(principal.role === 'admin' ? { role: 'admin' as const } : {}) }),
    }),
  };
}

export type TokenService = ReturnType<typeof createTokenService>;

/** The bearer token of an `Authorization` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match?.[1] ?? null;
}
