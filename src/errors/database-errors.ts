/** Prisma's codes for "the database cannot be reached / the connection broke / the pool is exhausted". */
const UNAVAILABLE_CODES = new Set([
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2024',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
]);
const UNAVAILABLE_TEXT =
  /ECONNREFUSED|ECONNRESET|Connection terminated|terminating connection|database system is (starting up|shutting down|in recovery mode)|Can't reach database|Server has closed the connection|Timed out fetching a new connection|connection (is )?closed|timeout exceeded when trying to connect/i;

/**
 * True when an error means Postgres is unreachable or restarting (a retryable condition), looking through the
 * cause chain Prisma's driver adapter wraps around the pg error.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    const candidate = current as { code?: unknown; message?: unknown; cause?: unknown; originalCode?: unknown };
    if (typeof candidate.code === 'string' && UNAVAILABLE_CODES.has(candidate.code)) return true;
    if (typeof candidate.originalCode === 'string' && UNAVAILABLE_CODES.has(candidate.originalCode)) return true;
    if (typeof candidate.message === 'string' && UNAVAILABLE_TEXT.test(candidate.message)) return true;
    current = candidate.cause;
  }
  return false;
}
