import { randomUUID } from 'node:crypto';
import { SignJWT, decodeJwt, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { AppError } from '../core/errors/app-error';

export interface Principal {
  userId: string;
  role: 'user' | 'admin';
  kind: 'guest' | 'external';
  /** When the token stops being accepted (ms since the epoch): a socket is disconnected then. */
  expiresAt: number;
  /** The token's `iat` (ms since the epoch; 0 when absent): tokens issued before an erasure are refused. */
  issuedAt?: number;
  /**
   * The spend-limit groups a host-minted token places its user in (SPEND_LIMIT_GROUP_CLAIM; sorted, no repeats; empty
   * when the claim is absent). Undefined: no group claim is configured, or a guest's token.
   */
  groups?: readonly string[];
}

export interface TokenServiceOptions {
  /** Lifetime of one guest token (GUEST_TOKEN_TTL). Default 30 days. */
  guestTokenTtlSeconds?: number;
  /** Absolute lifetime of a guest session from its first token (GUEST_MAX_AGE). Default 90 days. */
  guestMaxAgeSeconds?: number;
  /** JWT_ISSUER: required `iss` of every token; tokens signed here carry it. */
  issuer?: string;
  /** JWT_AUDIENCE: required `aud` of every token; tokens signed here carry it. */
  audience?: string;
  /** SPEND_LIMIT_GROUP_CLAIM: the claim of host-minted tokens naming their user's spend-limit groups. */
  groupClaim?: string;
}

/** Bounds of a token's group claim: a host names a few groups, not a directory. */
export const MAX_CLAIM_GROUPS = 32;
export const MAX_GROUP_NAME_CHARS = 100;

/**
 * The groups a token's claim names: a name or a list of names (absent: none). Anything else refuses the token, so a
 * host's mistake shows at once rather than as a limit that silently does not apply.
 */
export function groupsOfClaim(claim: string, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const names = typeof value === 'string' ? [value] : value;
  const valid =
    Array.isArray(names) &&
    names.length <= MAX_CLAIM_GROUPS &&
    names.every(
      (name) => typeof name === 'string' && name.trim().length > 0 && name.trim().length <= MAX_GROUP_NAME_CHARS,
    );
  if (!valid) {
    throw new AppError(
      'UNAUTHORIZED',
      `The token's ${claim} claim must name at most ${MAX_CLAIM_GROUPS} groups of 1-${MAX_GROUP_NAME_CHARS} characters.`,
    );
  }
  return [...new Set((names as string[]).map((name) => name.trim()))].sort();
}

const DAY_SECONDS = 24 * 3600;
/** Verified tokens remembered per process (a few MB at most). */
const VERIFIED_TOKENS_KEPT = 10_000;
const ALGORITHM = 'HS256';
/** The claim carrying a guest session's first issue time (seconds), kept across refreshes. */
export const FIRST_ISSUED_AT_CLAIM = 'orig_iat';

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** The service's key and settings, shared by its steps. */
interface Signing {
  key: Uint8Array;
  options: TokenServiceOptions;
  guestTtl: number;
  guestMaxAge: number;
}

/** Signs a token for `principal`, living `ttlSeconds`; a guest's never past GUEST_MAX_AGE from its first token. */
async function signToken(
  signing: Signing,
  principal: { userId: string; role?: 'admin'; kind: 'guest' | 'external'; firstIssuedAt?: number },
  ttlSeconds = signing.guestTtl,
): Promise<string> {
  const { options } = signing;
  const now = nowSeconds();
  const firstIssuedAt = principal.kind === 'guest' ? (principal.firstIssuedAt ?? now) : undefined;
  const expiresAt =
    firstIssuedAt === undefined ? now + ttlSeconds : Math.min(now + ttlSeconds, firstIssuedAt + signing.guestMaxAge);
  const jwt = new SignJWT({
    kind: principal.kind,
    ...(principal.role ? { role: principal.role } : {}),
    ...(firstIssuedAt !== undefined ? { [FIRST_ISSUED_AT_CLAIM]: firstIssuedAt } : {}),
  })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(principal.userId)
    .setIssuedAt(now)
    .setExpirationTime(expiresAt);
  if (options.issuer) jwt.setIssuer(options.issuer);
  if (options.audience) jwt.setAudience(options.audience);
  return jwt.sign(signing.key);
}

/** The principal a verified token's payload names. */
function toPrincipal(payload: JWTPayload, options: TokenServiceOptions): Principal {
  if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 200) {
    throw new AppError('UNAUTHORIZED', 'The token has no subject.');
  }
  const kind = payload.kind === 'guest' ? 'guest' : 'external';
  return {
    userId: payload.sub,
    role: payload.role === 'admin' ? 'admin' : 'user',
    kind,
    expiresAt: (payload.exp ?? 0) * 1000,
    issuedAt: (payload.iat ?? 0) * 1000,
    ...(options.groupClaim && kind === 'external'
      ? { groups: groupsOfClaim(options.groupClaim, payload[options.groupClaim]) }
      : {}),
  };
}

/** Verifies signature and claims as of `at` (seconds; default now). */
async function verifiedPayload(signing: Signing, token: string, at?: number): Promise<JWTPayload> {
  const { options } = signing;
  try {
    const { payload } = await jwtVerify(token, signing.key, {
      algorithms: [ALGORITHM],
      requiredClaims: ['exp'],
      ...(options.issuer ? { issuer: options.issuer } : {}),
      ...(options.audience ? { audience: options.audience } : {}),
      ...(at !== undefined ? { currentDate: new Date(at * 1000) } : {}),
    });
    return payload;
  } catch (error) {
    const expired = error instanceof joseErrors.JWTExpired;
    const missingExpiry = error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'exp' && !expired;
    const message = expired
      ? 'The token has expired.'
      : missingExpiry
        ? 'The token has no expiry (exp).'
        : 'The token is not valid.';
    throw new AppError('UNAUTHORIZED', message, { cause: error });
  }
}

/**
 * The next token of a guest session. Only guest tokens are refreshed (admins and host-minted users get theirs
 * from the host); an expired guest token is still accepted here, checked as of its last valid second, because
 * a tab that slept past `exp` must keep its threads; nothing is issued past GUEST_MAX_AGE from the first token.
 */
async function refreshToken(
  signing: Signing,
  token: string,
): Promise<{ userId: string; token: string; expiresAt: string }> {
  let unverifiedExpiry: unknown;
  try {
    unverifiedExpiry = decodeJwt(token).exp;
  } catch (error) {
    throw new AppError('UNAUTHORIZED', 'The token is not valid.', { cause: error });
  }
  const at = typeof unverifiedExpiry === 'number' ? Math.min(nowSeconds(), unverifiedExpiry - 1) : undefined;
  const payload = await verifiedPayload(signing, token, at);
  const principal = toPrincipal(payload, signing.options);
  if (principal.kind !== 'guest' || principal.role === 'admin') {
    throw new AppError(
      'FORBIDDEN',
      'Only guest tokens are refreshed here; ask the application that issued this token for a new one.',
    );
  }
  const claimed = payload[FIRST_ISSUED_AT_CLAIM] ?? payload.iat;
  if (typeof claimed !== 'number')
    throw new AppError('UNAUTHORIZED', 'The token does not say when the guest session began.');
  if (nowSeconds() >= claimed + signing.guestMaxAge) {
    throw new AppError('UNAUTHORIZED', 'This guest session has reached its maximum age; start a new one.');
  }
  const next = await signToken(signing, { userId: principal.userId, kind: 'guest', firstIssuedAt: claimed });
  return { userId: principal.userId, token: next, expiresAt: new Date(decodeJwt(next).exp! * 1000).toISOString() };
}

/**
 * Bearer tokens: HS256 JWTs (algorithm pinned) whose `sub` is the user id, signed with AUTH_SECRET, so a host
 * application can mint them. Every token must carry `exp`; with JWT_ISSUER / JWT_AUDIENCE set, `iss` / `aud` must
 * match. `role: "admin"` makes an admin. Guests get tokens from POST /api/auth/guest and renew them with
 * POST /api/auth/refresh, never past GUEST_MAX_AGE from their first token (claim `orig_iat`).
 */
export function createTokenService(secret: string, options: TokenServiceOptions = {}) {
  const signing: Signing = {
    key: new TextEncoder().encode(secret),
    options,
    guestTtl: options.guestTokenTtlSeconds ?? 30 * DAY_SECONDS,
    guestMaxAge: options.guestMaxAgeSeconds ?? 90 * DAY_SECONDS,
  };
  const sign = (principal: Parameters<typeof signToken>[1], ttlSeconds?: number): Promise<string> =>
    signToken(signing, principal, ttlSeconds);

  // Tokens this process verified, until they expire: every request and socket carries one, and the HMAC check
  // through WebCrypto was ~4% of the server's CPU per turn. A token's signature and claims cannot change; only
  // time can end it, so a hit re-checks the expiry. Bounded: the oldest entries go first.
  const verified = new Map<string, Principal>();
  async function verify(token: string): Promise<Principal> {
    const known = verified.get(token);
    if (known && Date.now() < known.expiresAt) return known;
    const principal = toPrincipal(await verifiedPayload(signing, token), options);
    verified.delete(token);
    if (verified.size >= VERIFIED_TOKENS_KEPT) verified.delete(verified.keys().next().value as string);
    verified.set(token, principal);
    return principal;
  }

  return {
    sign,
    verify,
    refresh: (token: string) => refreshToken(signing, token),
    async issueGuest(): Promise<{ userId: string; token: string; expiresAt: string }> {
      const userId = `guest-${randomUUID()}`;
      const token = await sign({ userId, kind: 'guest' });
      return { userId, token, expiresAt: new Date(decodeJwt(token).exp! * 1000).toISOString() };
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;

/** The bearer token of an `Authorization` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match?.[1] ?? null;
}
