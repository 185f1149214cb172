import { timingSafeEqual } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import { AppError } from '../core/errors/app-error';
import type { Metrics } from '../observability/metrics';
import type { RateLimiter } from '../core/limits/rate-limiter';
import { bearerToken } from '../auth/token-service';
import { clientKeyOf } from './client-address';
import { withFailureLimit } from './failed-auth-limit';

function sameToken(given: string | null, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * `GET /metrics` in Prometheus' text format, for `Authorization: Bearer <token>` (METRICS_TOKEN, else ADMIN_TOKEN).
 * Wrong tokens count against the address' failed-credential limit (shared with the admin credentials).
 */
export function metricsRoutes(options: { registry: Registry; token: string; failures: RateLimiter }): Router {
  const router = Router();
  router.get('/metrics', async (request, response) => {
    await withFailureLimit(options.failures, clientKeyOf(request), async () => {
      if (!sameToken(bearerToken(request.headers.authorization), options.token)) {
        throw new AppError('UNAUTHORIZED', 'The metrics token is required.');
      }
    });
    response.type(options.registry.contentType).send(await options.registry.metrics());
  });
  return router;
}

/**
 * First middleware: counts responses by status (429s as rate-limited requests) and, once the process is
 * stopping, answers new requests 503 with `Connection: close` so clients and load balancers go elsewhere.
 */
export function observeRequests(options: { metrics: Metrics; closing: () => boolean }): RequestHandler {
  return (request, response, next) => {
    response.on('finish', () => {
      options.metrics.httpResponses.inc({ method: request.method, status: String(response.statusCode) });
      if (response.statusCode === 429) options.metrics.rateLimited.inc({ transport: 'http' });
    });
    if (options.closing() && request.path !== '/healthz') {
      response.setHeader('Connection', 'close');
      next(new AppError('UNAVAILABLE', 'The server is restarting; try again.'));
      return;
    }
    next();
  };
}
