import { AppError } from '../../core/errors/app-error';

/** Runs a queue call; a Redis that fails or does not answer becomes UNAVAILABLE (503). */
export async function onQueue<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new AppError('UNAVAILABLE', 'The job queue is unavailable (Redis); try again shortly.', { cause: error });
  }
}
