import type { Job, Worker } from 'bullmq';
import type { Metrics } from './metrics';

/** Job lag (enqueued to finished) and failed attempts of a BullMQ worker running in this process. */
export function observeWorker(worker: Worker, metrics: Metrics, options: { lag?: 'fold' } = {}): void {
  worker.on('completed', (job: Job) => {
    if (options.lag === 'fold' && job.finishedOn)
      metrics.foldLag.observe(Math.max(0, job.finishedOn - job.timestamp) / 1000);
  });
  worker.on('failed', (job: Job | undefined) => {
    const final = job ? job.attemptsMade >= (job.opts.attempts ?? 1) : true;
    metrics.failedJobs.inc({ queue: worker.name, final: String(final) });
  });
}
