import { AppError } from '../errors';
import type { RateLimiter } from '../limits/rate-limiter';

/**
 * Counts one model-spending request (a send, retry, regeneration, edit, or a forget that rebuilds the summary)
 * against the user's RATE_LIMIT_PER_MINUTE, shared by REST and sockets; RATE_LIMITED when it is spent.
 */
export async function spendOrRefuse(limiter: RateLimiter, userId: string): Promise<void> {
  const decision = await limiter.hit(userId);
  if (decision.allowed) return;
  throw new AppError('RATE_LIMITED', `Too many messages; try again in ${decision.retryAfterSeconds} s.`, { details: { retryAfterSeconds: decision.retryAfterSeconds } });
}
