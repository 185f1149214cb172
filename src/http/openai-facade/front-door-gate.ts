import express, { type RequestHandler } from 'express';
import { AppError } from '../../core/errors/app-error';
import type { HttpDeps } from '../http-deps';
import { checkJsonBody } from '../json-body-checks';
import type { FacadeHttpDeps } from './facade-deps';
import { checkCredentialBeforeBody, type CredentialSource, type FacadePrincipalDeps } from './facade-principal';

/** What resolving a front door's caller reads, its credential read from `credential` (default: the bearer token). */
export function principalDepsOf(
  deps: HttpDeps,
  facade: FacadeHttpDeps,
  credential?: CredentialSource,
): FacadePrincipalDeps {
  return {
    tokens: deps.tokens,
    threads: deps.threads,
    erasures: deps.erasures,
    ...(deps.claimGroups ? { claimGroups: deps.claimGroups } : {}),
    serviceKeys: facade.serviceKeys,
    ...(credential ? { credential } : {}),
  };
}

/**
 * What every front door (/v1, /v1/messages) runs before its routes: 503 while the process shuts down, the credential
 * checked before the body, then the body parsed (at most FACADE_MAX_BODY_BYTES). Their failures reach the error handler
 * mounted after the door's router, so each door answers them in its own shape.
 */
export function frontDoorGate(facade: FacadeHttpDeps, principalDeps: FacadePrincipalDeps): RequestHandler[] {
  return [
    (_request, response, next) => {
      if (facade.closing()) {
        response.setHeader('Connection', 'close');
        next(
          new AppError('UNAVAILABLE', 'The server is restarting; try again.', { details: { retryAfterSeconds: 2 } }),
        );
        return;
      }
      next();
    },
    // The credential before the body: an unauthenticated client announcing megabytes is refused before they arrive.
    (request, response, next) => {
      checkCredentialBeforeBody(request, principalDeps).then(
        () => next(),
        (error: unknown) => {
          // The rest of the body is not waited for: the connection ends with the answer.
          response.setHeader('Connection', 'close');
          next(error);
        },
      );
    },
    express.json({
      limit: facade.maxBodyBytes,
      strict: true,
      verify: (_request, _response, buffer) => checkJsonBody(buffer),
    }),
  ];
}
