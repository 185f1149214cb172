import type { Redis } from 'ioredis';
import type { FoldDeps } from '../core/summary/fold-thread';
import { titleThread, type TitleDeps } from '../core/titles';
import { createThreadTitleRepository } from '../db/thread-title-repository';
import { createFoldProducer, type FoldProducer } from '../jobs/fold-queue';
import { SUMMARY_QUEUE } from '../jobs/queue-names';
import { createQueueRegistry, type BullQueueRegistry } from '../jobs/queue-registry';
import { createProducerConnection } from '../jobs/redis-connections';
import type { Wiring } from './application';
import type { Models } from './wire-models';
import type { Observed, Stores } from './wire-stores';

/** The producers' Redis connection, the summary queue and what folds and titles a thread. */
export interface Queues {
  /** Fails fast when Redis is down: the request path's connection (queues, limits, kicks, probes). */
  producerConnection: Redis;
  folds: FoldProducer;
  /** Queues shown to admins; the tools step registers its queue here. */
  registry: BullQueueRegistry;
  /** When an idle thread is folded for the next visit (the prompt cache's lifetime, a minimum of tokens). */
  idleFold: { quietMs: number; minTokens: number };
  foldDeps: FoldDeps;
  titleDeps: TitleDeps;
  /** Titles a new thread: by a job of the summary queue, or at once from its first words. */
  requestTitle: (threadId: string) => Promise<unknown>;
}

/** Step 3: the producer connection, the summary queue (in the metrics and the admins' registry), folds and titles. */
export function wireQueues(
  { options, env, log, settings }: Wiring,
  { stores, observed, models }: { stores: Stores; observed: Observed; models: Models },
): Queues {
  const producerConnection: Redis = createProducerConnection(options.redisUrl);
  producerConnection.on('error', (error) => log.debug({ err: error }, 'redis producer connection error'));
  const idleFold = {
    quietMs: env.PROMPT_CACHE_TTL * 1000,
    minTokens: env.IDLE_FOLD_MIN_TOKENS ?? 2 * settings.summaryMaxTokens,
  };
  const folds = createFoldProducer({
    connection: producerConnection,
    prefix: env.REDIS_PREFIX,
    idleFoldDelayMs: idleFold.quietMs,
    onError: (error) => log.debug({ err: error }, 'summary queue error'),
  });
  observed.metrics.sources.queues.push({
    name: SUMMARY_QUEUE,
    getJobCounts: (...states) => folds.queue.getJobCounts(...(states as Parameters<typeof folds.queue.getJobCounts>)),
  });

  const registry = createQueueRegistry();
  registry.register(folds.queue);

  const { turns, summaries, calls } = stores;
  const { events } = observed;
  const foldDeps: FoldDeps = { turns, summaries, summarizer: models.summarizer, calls, events, settings, log };
  // Chat titles: by the summarizer model in a job of the summary queue; with the offline model (its extractive
  // summarizer makes no title) or CHAT_TITLES=words, from the first message's words at once.
  const titlesFromWords = models.label.provider === 'offline' || env.CHAT_TITLES === 'words';
  const titleDeps: TitleDeps = {
    titles: createThreadTitleRepository(stores.db),
    model: titlesFromWords ? null : models.summarizer,
    calls,
    events,
    settings,
    log,
  };
  const requestTitle = titlesFromWords
    ? (threadId: string) => titleThread({ threadId }, titleDeps)
    : (threadId: string) => folds.enqueueTitle(threadId);
  return { producerConnection, folds, registry, idleFold, foldDeps, titleDeps, requestTitle };
}
