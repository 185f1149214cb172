import type { RequestHandler, Response } from 'express';
import { AppError } from '../core/errors/app-error';
import { principalFromToken, type PrincipalDeps } from '../auth/principal-from-token';
import { bearerToken, type Principal } from '../auth/token-service';

/** Requires `Authorization: Bearer <jwt>`; puts the principal in `response.locals.principal`. */
export function authenticate(deps: PrincipalDeps): RequestHandler {
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
