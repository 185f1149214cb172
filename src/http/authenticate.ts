import type { RequestHandler, Response } from 'express';
import { AppError } from '../core/errors';
import { bearerToken, type Principal, type TokenService } from './auth';
import type { ThreadStore } from '../core/ports';
import { refusedAfterErasure, type ErasureStore } from '../core/erasure';

/** Users already upserted by this process: the first request of a user creates its row, later ones skip it. */
const knownUsers = new Set<string>();

/** An erased user is upserted again on its next accepted request (a host-minted id with a token issued after it). */
export function forgetKnownUser(userId: string): void {
  knownUsers.delete(userId);
}

/**
 * The principal of a bearer token. A token of an erased user is refused (UNAUTHORIZED) when it was
 * issued before the erasure, and always for a guest; a newer token of a host-minted user recreates an empty user.
 */
export async function principalFromToken(token: string | null, deps: { tokens: TokenService; threads: ThreadStore; erasures: Pick<ErasureStore, 'erasureOf'> }): Promise<Principal> {
  if (!token) throw new AppError('UNAUTHORIZED', 'A bearer token is required.');
  const principal = await deps.tokens.verify(token);
  const erasure = await deps.erasures.erasureOf(principal.userId);
  if (refusedAfterErasure(erasure, { issuedAtMs: principal.issuedAt ?? 0, kind: principal.kind })) {
    throw new AppError('UNAUTHORIZED', 'This account was erased; sign in again.');
  }
  // In another process the user may still be "known" from before its erasure: upsert it again.
  if (erasure) knownUsers.delete(principal.userId);
  if (!knownUsers.has(principal.userId)) {
    await deps.threads.ensureUser(principal.userId, principal.kind);
    if (knownUsers.size > 100_000) knownUsers.clear();
    knownUsers.add(principal.userId);
  }
  return principal;
}

/** Requires `Authorization: Bearer <jwt>`; puts the principal in `response.locals.principal`. */
export function authenticate(deps: { tokens: TokenService; threads: ThreadStore; erasures: Pick<ErasureStore, 'erasureOf'> }): RequestHandler {
  return (request, response, next) => {
    principalFromToken(bearerToken(request.headers.authorization), deps).then((principal) => {
      response.locals.principal = principal;
      next();
    }, next);
  };
}

export function principalOf(response: Response): Principal {
  const principal = response.locals.principal as Principal | undefined;
  if (!principal) throw new AppError('UNAUTHORIZED', 'A bearer token is required.');
  return principal;
}
