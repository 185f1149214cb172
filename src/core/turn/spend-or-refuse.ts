import { AppError } from '../errors/app-error';
import type { RateLimiter } from '../limits/rate-limiter';

/**
 * Counts one model-spending request (a send, retry, regeneration, edit, or a forget that rebuilds the summary)
 * against the user's RATE_LIMIT_PER_MINUTE, shared by REST and sockets; RATE_LIMITED when it is spent. Other per-user
 * budgets (FORKS_PER_MINUTE) use it with their own limiter and `what` names the refused thing in the message.
 */
export async function spendOrRefuse(limiter: RateLimiter, userId: string, what = 'messages'): Promise<void> {
  const decision = await limiter.hit(userId);
  if (decision.allowed) return;
  throw new AppError('RATE_LIMITED', `Too many ${what}; try again in ${decision.retryAfterSeconds} s.`, {
    details: { retryAfterSeconds: decision.retryAfterSeconds },
  });
}
