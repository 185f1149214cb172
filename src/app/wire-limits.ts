import { createTokenService, type TokenService } from '../auth/token-service';
import type { RateLimiter } from '../core/limits/rate-limiter';
import type { SpendGate } from '../core/spend-gate/spend-gate';
import { createSharedRateLimiter } from '../jobs/redis-rate-limiter';
import type { Wiring } from './application';
import type { Queues } from './wire-queues';

/** The shared rate limits of the entry points and the token service. */
export interface Limits {
  rateLimits: { guests: RateLimiter; adminSignIn: RateLimiter; authFailures: RateLimiter };
  tokens: TokenService;
  sendLimiter: RateLimiter;
  searchLimiter: RateLimiter;
  exportLimiter: RateLimiter;
  forkLimiter: RateLimiter;
  toolRoundLimiter: RateLimiter;
}

/** Step 7a: per-user and per-address limits live in Redis, so every process counts against one budget. */
export function wireLimits(
  { options, env, log }: Wiring,
  { queues, spend }: { queues: Queues; spend: SpendGate | undefined },
): Limits {
  const sharedLimit = (name: string, limit: number) =>
    createSharedRateLimiter({ redis: queues.producerConnection, prefix: env.REDIS_PREFIX, name, limit, log });
  const rateLimits = {
    guests: sharedLimit('guest', env.GUEST_RATE_LIMIT_PER_MINUTE),
    adminSignIn: sharedLimit('admin-sign-in', env.ADMIN_SIGN_IN_LIMIT_PER_MINUTE),
    authFailures: sharedLimit('auth-failure', env.AUTH_FAILURE_LIMIT_PER_MINUTE),
  };
  const tokens = createTokenService(options.authSecret, {
    guestTokenTtlSeconds: env.GUEST_TOKEN_TTL,
    guestMaxAgeSeconds: env.GUEST_MAX_AGE,
    ...(env.JWT_ISSUER ? { issuer: env.JWT_ISSUER } : {}),
    ...(env.JWT_AUDIENCE ? { audience: env.JWT_AUDIENCE } : {}),
    ...(spend && env.SPEND_LIMIT_GROUP_CLAIM ? { groupClaim: env.SPEND_LIMIT_GROUP_CLAIM } : {}),
  });
  return {
    rateLimits,
    tokens,
    sendLimiter: sharedLimit('send', env.RATE_LIMIT_PER_MINUTE),
    searchLimiter: sharedLimit('search', env.SEARCH_PER_MINUTE),
    exportLimiter: sharedLimit('export', env.EXPORTS_PER_MINUTE),
    forkLimiter: sharedLimit('fork', env.FORKS_PER_MINUTE),
    toolRoundLimiter: sharedLimit('tool-round', env.TOOL_ROUNDS_PER_MINUTE),
  };
}
