import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { AppError } from '../../core/errors/app-error';
import { bearerToken } from '../../auth/token-service';
import { KnownUsers, principalFromToken, type PrincipalDeps } from '../../auth/principal-from-token';

/** Headers naming the end user of a service key, first found wins (Open WebUI forwards its user as the second). */
export const END_USER_HEADERS = ['x-user-id', 'x-openwebui-user-id'] as const;

/** An end user's id as a service key names it: printable, no spaces, at most 128 characters. */
const END_USER = /^[\x21-\x7e]{1,128}$/;

/** Pass as the body's user where no end user is needed (listing models): a service key alone is enough there. */
export const SERVICE_ONLY = Symbol('service key alone');

/** Who a /v1 request acts for: our user id ('' for a service key alone), and whether a service key named them. */
export interface FacadePrincipal {
  userId: string;
  viaServiceKey: boolean;
}

/** User tokens verified by checkCredentialBeforeBody, by request: the body's turn does not verify them again. */
const verifiedBeforeBody = new WeakMap<Request, string>();

/**
 * Checks a /v1 request's credential before its body is read (a body may be FACADE_MAX_BODY_BYTES long): no bearer
 * token, or one that is neither a service key nor a valid user token, is UNAUTHORIZED at once. A service key's end
 * user may be named in the body, so it is resolved afterwards by facadePrincipal.
 */
export async function checkCredentialBeforeBody(request: Request, deps: FacadePrincipalDeps): Promise<void> {
  const token = credentialOf(request, deps);
  if (deps.serviceKeys.length > 0 && matchingKey(token, deps.serviceKeys)) return;
  verifiedBeforeBody.set(request, (await principalFromToken(token, deps)).userId);
}

/** Service keys' users already stored by this process (the first request of one creates its row). */
const knownServiceUsers = new KnownUsers();

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Whether a bearer token is one of the service keys (compared in constant time). */
export function isServiceKey(token: string, keys: readonly string[]): boolean {
  return keys.length > 0 && matchingKey(token, keys) !== null;
}

/** The service key a token is, compared in constant time (null: not a service key). */
function matchingKey(token: string, keys: readonly string[]): string | null {
  const presented = digest(token);
  let found: string | null = null;
  for (const key of keys) if (timingSafeEqual(presented, digest(key))) found = key;
  return found;
}

/**
 * The user a service key's end user is in our store: namespaced by the key (a short hash of it), so two applications
 * with their own keys never reach each other's users, and no service key reaches a user of a bearer token.
 */
export function serviceUserId(key: string, endUser: string): string {
  return `svc-${serviceKeyId(key)}:${endUser}`;
}

/** A service key's id: the short hash of it that its end users' ids carry (what admins name its spend limit by). */
export function serviceKeyId(key: string): string {
  return digest(key).toString('hex').slice(0, 16);
}

function endUserOf(request: Request, bodyUser: unknown, source: CredentialSource): string {
  for (const name of END_USER_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  if (typeof bodyUser === 'string' && bodyUser.trim() !== '') return bodyUser.trim();
  throw new AppError(
    'VALIDATION',
    `A service key acts for an end user: name them with the X-User-Id header (or X-OpenWebUI-User-Id, or the body's "${source.bodyUser}").`,
    { details: { field: source.bodyUser } },
  );
}

/** Where a front door reads its caller's credential, and how it says one is missing. */
export interface CredentialSource {
  of(request: Request): string | null;
  missing: string;
  /** The body field naming a service key's end user, as errors name it. */
  bodyUser: string;
}

/** The OpenAI routes' credential: `Authorization: Bearer <token>`. */
export const BEARER_CREDENTIAL: CredentialSource = {
  of: (request) => bearerToken(request.headers.authorization),
  missing: 'A bearer token is required: a user token, or a service key.',
  bodyUser: 'user',
};

/** What resolving a /v1 caller reads: tokens, the users table, and the erasure tombstones. */
export interface FacadePrincipalDeps extends PrincipalDeps {
  serviceKeys: readonly string[];
  /** Where the credential is read (default: the bearer token). */
  credential?: CredentialSource;
}

/** The request's credential, or UNAUTHORIZED naming where it is expected. */
function credentialOf(request: Request, deps: FacadePrincipalDeps): string {
  const source = deps.credential ?? BEARER_CREDENTIAL;
  const token = source.of(request);
  if (!token) throw new AppError('UNAUTHORIZED', source.missing);
  return token;
}

/**
 * `Authorization: Bearer <token>`: a user's token as on the rest of the API, or one of OPENAI_FACADE_KEYS acting for
 * the end user the request names. UNAUTHORIZED without a valid one.
 *
 * Erased users (issue 27): a user token is held to the same tombstone as on /api (issued before the erasure, or a
 * guest's: refused). A service key's end user comes back as a new, empty user on the key's next request: the key is
 * the host application's credential at the time of the request, as a token it mints after the erasure would be, and
 * the erased conversations stay gone (the history a client resends holds answers this server no longer has, so it is
 * refused like any history it did not write).
 */
export async function facadePrincipal(
  request: Request,
  deps: FacadePrincipalDeps,
  bodyUser?: unknown,
): Promise<FacadePrincipal> {
  const token = credentialOf(request, deps);
  const key = deps.serviceKeys.length > 0 ? matchingKey(token, deps.serviceKeys) : null;
  if (!key) {
    const early = verifiedBeforeBody.get(request);
    return { userId: early ?? (await principalFromToken(token, deps)).userId, viaServiceKey: false };
  }
  if (bodyUser === SERVICE_ONLY) return { userId: '', viaServiceKey: true };
  const source = deps.credential ?? BEARER_CREDENTIAL;
  const endUser = endUserOf(request, bodyUser, source);
  if (!END_USER.test(endUser))
    throw new AppError('VALIDATION', 'The end user id must be 1 to 128 printable characters without spaces.', {
      details: { field: source.bodyUser },
    });
  const userId = serviceUserId(key, endUser);
  // Erased (by an admin, in this process or another) since this process stored them: stored again, empty, once.
  const erasure = await deps.erasures.erasureOf(userId);
  if (knownServiceUsers.needsRow(userId, erasure)) {
    await deps.threads.ensureUser(userId, 'external');
    knownServiceUsers.remember(userId, erasure);
  }
  return { userId, viaServiceKey: true };
}
