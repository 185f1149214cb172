import { AppError } from '../errors/app-error';

/** The refusal of a new thread or a branch when the owner already keeps MAX_THREADS_PER_USER threads. */
export function threadQuotaExceeded(count: number, maxThreads: number, then: 'start another' | 'branch'): AppError {
  return new AppError(
    'QUOTA_EXCEEDED',
    `You have ${count} threads, the most one user may keep (MAX_THREADS_PER_USER = ${maxThreads}); delete one to ${then}.`,
  );
}
