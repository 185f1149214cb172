import { trustProxySetting } from '../config/env';
import { createMemoryRateLimiter } from '../core/limits/rate-limiter';
import { createForkRepository } from '../db/fork-repository';
import { pingDatabase } from '../db/database-health';
import { createMessageContextReader } from '../db/message-context-reader';
import { assertThreadRoom } from '../db/thread-quota';
import { runnerSecretOf, SIGNATURE_TOLERANCE_MS } from '../external';
import type { HttpDeps } from '../http/http-deps';
import { pingRedis } from '../jobs/redis-connections';
import { createSignatureReplayStore } from '../jobs/signature-replay-store';
import type { Wiring } from './application';
import { usesOfflineDemoWindow } from './context-settings-from-env';
import { adminDeps } from './wire-admin-deps';
import { erasureDeps, type ErasureParts } from './wire-erasure-deps';
import { facadeDeps } from './wire-facade-deps';
import type { Limits } from './wire-limits';
import type { TurnParts, Turns } from './wire-turns';

export type HttpParts = TurnParts & ErasureParts & { turns: Turns; limits: Limits };

/** Step 7: what the routes and the socket handlers reach (the socket server adds its own bounds). */
export function wireHttpDeps(wiring: Wiring, parts: HttpParts): HttpDeps {
  const { env, log, settings } = wiring;
  const { stores, observed, spend, models, queues, tools, turns, limits } = parts;
  const { threads, transcript, turns: turnStore } = stores;
  const { sendLimiter } = limits;
  const forks = createForkRepository(stores.db);
  return {
    log,
    threads,
    transcript,
    search: stores.search,
    turns: turnStore,
    runner: turns.runner,
    cancelTurn: turns.cancelTurn,
    requestTitle: queues.requestTitle,
    events: observed.events,
    settings,
    tokens: limits.tokens,
    ...(spend && env.SPEND_LIMIT_GROUP_CLAIM ? { claimGroups: stores.spendStore } : {}),
    sendLimiter,
    ...(spend ? { spend } : {}),
    searchLimiter: limits.searchLimiter,
    exportLimiter: limits.exportLimiter,
    requestLimiter: createMemoryRateLimiter({ limit: env.API_REQUESTS_PER_MINUTE }),
    rateLimits: limits.rateLimits,
    corsCredentials: env.CORS_CREDENTIALS ?? false,
    trustProxy: trustProxySetting(env.TRUST_PROXY),
    probes: {
      postgres: () => pingDatabase(stores.db),
      redis: () => pingRedis(queues.producerConnection),
    },
    info: {
      model: models.label.model,
      provider: models.label.provider,
      offline: models.label.provider === 'offline',
      budget: settings.budget,
      contextWindow: settings.profile.maxInputTokens,
      demoWindow: usesOfflineDemoWindow(env),
    },
    limits: {
      maxMessageChars: env.MAX_MESSAGE_CHARS,
      maxQueuedTurns: env.MAX_QUEUED_TURNS,
      turnTimeoutMs: env.TURN_TIMEOUT_MS,
      maxThreadsPerUser: env.MAX_THREADS_PER_USER,
    },
    corsOrigins: env.CORS_ORIGINS.split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    allowGuests: env.ALLOW_GUESTS ?? false,
    toolRuns: tools.toolRuns,
    toolQueue: tools.toolQueue,
    toolCallbacks: toolCallbacksOf(wiring, parts),
    toolDefinitions: () => tools.registry.definitions(),
    messageContext: createMessageContextReader(stores.db),
    memory: {
      threads,
      transcript,
      turns: turnStore,
      memory: stores.memory,
      events: observed.events,
      settings,
      jobs: queues.folds,
      log,
      exportReader: stores.memory,
      pinnedMaxTokens: settings.pinnedMaxTokens,
      forks,
      sendLimiter,
    },
    fork: forkDeps(wiring, parts, forks),
    savedMemories: tools.savedMemories,
    erasures: stores.erasures,
    ...erasureDeps(wiring, parts),
    facade: facadeDeps(wiring, parts),
    admin: adminDeps(wiring, parts),
  };
}

/** External runners' signed callbacks (EXTERNAL_TOOLS with PUBLIC_BASE_URL), else null. */
function toolCallbacksOf({ env }: Wiring, { queues, turns }: HttpParts): HttpDeps['toolCallbacks'] {
  if (!(env.toolSources.externalTools.length > 0 && env.PUBLIC_BASE_URL)) return null;
  return {
    secretFor: (name) => runnerSecretOf(env.toolSources.externalTools, env.TOOL_WEBHOOK_SECRET, name),
    basePath: new URL(env.PUBLIC_BASE_URL).pathname.replace(/\/+$/, ''),
    deps: turns.asyncToolDeps,
    // Shared by every serve process: a signature is accepted once while its timestamp is valid.
    ...createSignatureReplayStore({
      redis: queues.producerConnection,
      prefix: env.REDIS_PREFIX,
      ttlMs: 2 * SIGNATURE_TOLERANCE_MS,
    }),
  };
}

/** Forks and edits: the new thread counts against MAX_THREADS_PER_USER like any other. */
function forkDeps(
  { env, log, settings }: Wiring,
  { stores, spend, limits }: HttpParts,
  forks: ReturnType<typeof createForkRepository>,
): HttpDeps['fork'] {
  return {
    threads: stores.threads,
    transcript: stores.transcript,
    memory: stores.memory,
    forks,
    turns: stores.turns,
    settings,
    sendLimiter: limits.sendLimiter,
    log,
    maxMessageChars: env.MAX_MESSAGE_CHARS,
    maxQueuedTurns: env.MAX_QUEUED_TURNS,
    maxThreadsPerUser: env.MAX_THREADS_PER_USER,
    forkLimiter: limits.forkLimiter,
    maxForkMessages: env.FORK_MAX_MESSAGES,
    ...(spend ? { spend } : {}),
    // A fork counts against MAX_THREADS_PER_USER like a new thread (checked early here, exactly when written).
    guards: { beforeNewThread: (userId: string) => assertThreadRoom(stores.db, userId, env.MAX_THREADS_PER_USER) },
  };
}
