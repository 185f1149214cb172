import type { RequestHandler, Response } from 'express';
import { AppError } from '../core/errors';
import { bearerToken, type Principal, type TokenService } from './auth';
import type { ThreadStore } from '../core/ports';

/** Users already upserted by this process: the first request of a user creates its row, later ones skip it. */
const knownUsers = new Set<string>();

export async function principalFromToken(token: string | null, deps: { tokens: TokenService; threads: ThreadStore }): Promise<Principal> {
  if (!token) throw new AppError('UNAUTHORIZED', 'A bearer token is required.');
  const principal = await deps.tokens.verify(token);
  if (!knownUsers.has(principal.userId)) {
    await deps.threads.ensureUser(principal.userId, principal.kind);
    if (knownUsers.size > 100_000) knownUsers.clear();
    knownUsers.add(principal.userId);
  }
  return principal;
}

/** Requires `Authorization: Bearer <jwt>`; puts the principal in `response.locals.principal`. */
export function authenticate(deps: { tokens: TokenService; threads: ThreadStore }): RequestHandler {
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
