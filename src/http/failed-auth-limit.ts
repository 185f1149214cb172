import { AppError } from '../core/errors/app-error';
import type { RateDecision, RateLimiter } from '../core/limits/rate-limiter';

function tooManyFailures(decision: Extract<RateDecision, { allowed: false }>): AppError {
  return new AppError(
    'RATE_LIMITED',
    `Too many failed sign-in attempts from this address; try again in ${decision.retryAfterSeconds} s.`,
    {
      details: { retryAfterSeconds: decision.retryAfterSeconds },
    },
  );
}

/**
 * Verifies a guessable credential (ADMIN_TOKEN, METRICS_TOKEN, an admin JWT) under AUTH_FAILURE_LIMIT_PER_MINUTE:
 * an address past its failures gets RATE_LIMITED without the credential being tried, and each failure counts.
 */
export async function withFailureLimit<T>(
  failures: RateLimiter,
  clientKey: string,
  verify: () => Promise<T>,
): Promise<T> {
  const before = await failures.check(clientKey);
  if (!before.allowed) throw tooManyFailures(before);
  try {
    return await verify();
  } catch (error) {
    const after = await failures.hit(clientKey);
    if (!after.allowed) throw tooManyFailures(after);
    throw error;
  }
}
