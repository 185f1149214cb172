import { Router } from 'express';

export type DependencyState = 'up' | 'down';

/** Probes the readiness route runs; each resolves true when its dependency answers. */
export interface HealthProbes {
  postgres(): Promise<boolean>;
  redis(): Promise<boolean>;
}

const PROBE_TIMEOUT_MS = 2000;

async function probe(check: () => Promise<boolean>): Promise<DependencyState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  try {
    return (await Promise.race([check().catch(() => false), timeout])) ? 'up' : 'down';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `/healthz`: the process is up. `/readyz`: Postgres answers (Redis down means degraded, not out:
 * turns keep working and folds are caught up by the sweeper).
 */
export function healthRoutes(probes: HealthProbes): Router {
  const router = Router();
  router.get('/healthz', (_request, response) => {
    response.json({ status: 'ok' });
  });
  router.get('/readyz', async (_request, response) => {
    const [postgres, redis] = await Promise.all([probe(probes.postgres), probe(probes.redis)]);
    const status = postgres === 'up' ? (redis === 'up' ? 'ready' : 'degraded') : 'unavailable';
    response.status(postgres === 'up' ? 200 : 503).json({ status, postgres, redis });
  });
  return router;
}
