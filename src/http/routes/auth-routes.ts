import { Router } from 'express';
import { AppError } from '../../core/errors/app-error';
import { bearerToken } from '../../auth/token-service';
import { clientKeyOf } from '../client-address';
import type { GuestSessionDto } from '../../shared/api';
import type { HttpDeps } from '../http-deps';

export function authRoutes(deps: HttpDeps): Router {
  const router = Router();

  router.post('/auth/guest', async (request, response) => {
    if (!deps.allowGuests) throw new AppError('FORBIDDEN', 'Guest sign-in is disabled on this server.');
    const limited = await deps.rateLimits.guests.hit(clientKeyOf(request));
    if (!limited.allowed) {
      throw new AppError(
        'RATE_LIMITED',
        `Too many guest sessions from this address; try again in ${limited.retryAfterSeconds} s.`,
        { details: { retryAfterSeconds: limited.retryAfterSeconds } },
      );
    }
    const guest: GuestSessionDto = await deps.tokens.issueGuest();
    await deps.threads.ensureUser(guest.userId, 'guest');
    // All the guests of one address spend from SPEND_LIMIT_GUESTS_PER_ADDRESS together.
    await deps.spend?.guestCreated(guest.userId, clientKeyOf(request));
    response.status(201).json(guest);
  });

  // Guest tokens only, and an expired one too (see TokenService.refresh): it does not pass `authenticate`.
  router.post('/auth/refresh', async (request, response) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw new AppError('UNAUTHORIZED', 'A bearer token is required.');
    const session: GuestSessionDto = await deps.tokens.refresh(token);
    // An erased guest never comes back (issue 27).
    if (await deps.erasures.erasureOf(session.userId))
      throw new AppError('UNAUTHORIZED', 'This account was erased; start a new session.');
    await deps.threads.ensureUser(session.userId, 'guest');
    response.json(session);
  });

  router.get('/info', (_request, response) => {
    response.json(deps.info);
  });

  return router;
}
