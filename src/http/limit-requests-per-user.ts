import type { RequestHandler } from 'express';
import { AppError } from '../core/errors/app-error';
import type { RateLimiter } from '../core/limits/rate-limiter';
import { principalOf } from './authenticate';

/**
 * Refuses a signed-in user's request past their per-minute allowance (API_REQUESTS_PER_MINUTE) with 429
 * RATE_LIMITED and `Retry-After`, before the route does any work. It runs after authentication, so it is keyed by
 * the user, not by an address a proxy may hide.
 */
export function limitRequestsPerUser(limiter: RateLimiter): RequestHandler {
  return (_request, response, next) => {
    const { userId } = principalOf(response);
    limiter.hit(userId).then((decision) => {
      if (decision.allowed) return next();
      next(
        new AppError('RATE_LIMITED', `Too many requests; try again in ${decision.retryAfterSeconds} s.`, {
          details: { retryAfterSeconds: decision.retryAfterSeconds },
        }),
      );
    }, next);
  };
}
