import { Router } from 'express';
import { AppError } from '../../core/errors';
import { bearerToken } from '../auth';
import { principalFromToken } from '../authenticate';
import { clientKeyOf } from '../client-address';
import type { HttpDeps } from '../http-deps';

export function authRoutes(deps: HttpDeps): Router {
  const router = Router();

  router.post('/auth/guest', async (request, response) => {
    if (!deps.allowGuests) throw new AppError('FORBIDDEN', 'Guest sign-in is disabled on this server.');
    const limited = await deps.rateLimits.guests.hit(clientKeyOf(request));
    if (!limited.allowed) {
      throw new AppError('RATE_LIMITED', `Too many guest sessions from this address; try again in ${limited.retryAfterSeconds} s.`, { details: { retryAfterSeconds: limited.retryAfterSeconds } });
    }
    const guest = await deps.tokens.issueGuest();
    await deps.threads.ensureUser(guest.userId, 'guest');
    response.status(201).json(guest);
  });

  router.post('/auth/refresh', async (request, response) => {
    const principal = await principalFromToken(bearerToken(request.headers.authorization), deps);
    response.json(await deps.tokens.refresh(principal));
  });

  router.get('/info', (_request, response) => {
    response.json(deps.info);
  });

  return router;
}
