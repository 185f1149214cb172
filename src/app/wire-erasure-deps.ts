import type { Queue } from 'bullmq';
import { forgetKnownUser } from '../auth/principal-from-token';
import { deleteThread, eraseUser } from '../core/erasure';
import { cancelRemoteWork } from '../core/tools';
import type { HttpDeps } from '../http/http-deps';
import { deleteRateLimitKeys } from '../jobs/redis-rate-limiter';
import { removeJobEventsOf } from '../jobs/remove-job-events-of';
import { removeJobsOf } from '../jobs/remove-jobs-of';
import type { SocketServer } from '../realtime/create-socket-server';
import type { Wiring } from './application';
import type { Queues } from './wire-queues';
import type { Stores } from './wire-stores';
import type { Tools } from './wire-tools';
import type { Turns } from './wire-turns';

export interface ErasureParts {
  stores: Stores;
  queues: Queues;
  tools: Tools;
  turns: Turns;
  /** The socket server, bound once it exists (it is built from the HTTP deps). */
  sockets: { server: SocketServer | null };
}

/** Deleting a thread and erasing a user: their turns stopped, remote tool work cancelled, jobs and keys removed. */
export function erasureDeps(
  { env, log }: Wiring,
  { stores, queues, tools, turns, sockets }: ErasureParts,
): Pick<HttpDeps, 'deleteThread' | 'eraseUser'> {
  const { erasures } = stores;
  const { runner } = turns;
  const { toolRuns, registry, toolQueue } = tools;
  const { folds, producerConnection } = queues;
  return {
    deleteThread: (threadId) =>
      deleteThread(threadId, {
        toolRunIdsOf: (id) => erasures.toolRunIdsOfThread(id),
        deleteThread: (id) => stores.threads.deleteThread(id),
        cancelTurns: (id) => runner.cancel(id),
        cancelRemoteWork: (runIds) => cancelRemoteWork(runIds, { runs: toolRuns, registry, log }),
        removeJobs: (refs) => removeJobsOf({ queues: [folds.queue as Queue, toolQueue.queue as Queue], ...refs }),
        log,
      }),
    eraseUser: async (input) => {
      const outcome = await eraseUser(input, {
        store: erasures,
        log,
        cancelTurns: (threadId) => runner.cancel(threadId),
        cancelRemoteWork: (runIds) => cancelRemoteWork(runIds, { runs: toolRuns, registry, log }),
        disconnect: async (userId) => {
          sockets.server?.disconnectUser(userId);
        },
        forgetEphemeral: async (userId) => {
          await deleteRateLimitKeys({ redis: producerConnection, prefix: env.REDIS_PREFIX, key: userId });
        },
        removeJobs: async (refs) => {
          const queues = [folds.queue as Queue, toolQueue.queue as Queue];
          const removed = await removeJobsOf({ queues, ...refs });
          // Their events (deduplication ids, failure reasons) name the threads and runs too.
          await removeJobEventsOf({ redis: producerConnection, queues, ids: [...refs.threadIds, ...refs.runIds] });
          return removed;
        },
      });
      forgetKnownUser(input.userId);
      return outcome;
    },
  };
}
