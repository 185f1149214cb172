import { responseIdKey } from '../http/openai-responses/response-ids';
import { compactionKey } from '../http/openai-responses/compaction-token';
import { serviceKeyId } from '../http/openai-facade/facade-principal';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { anthropicCacheTtl, chatProviderOf, modelsInUse, trustProxySetting, type Env } from '../config/env';
import { formatCondition, formatTriggerPolicy, getModelProfile, summarizerOutputTokens } from '../core/context';
import type { ChatModelPort, SummarizerPort, ThreadStore } from '../core/ports';
import { foldThread, type FoldDeps } from '../core/summary/fold-thread';
import type { TurnRunner } from '../core/turn/turn-runner';
import {
  cancelRemoteWork,
  cancelToolRun,
  createToolRegistry,
  shortToolSchema,
  SHORT_TOOL_SCHEMA_WINDOW,
  type AsyncToolDeps,
  type Tool,
  type ToolKit,
  type ToolServices,
} from '../core/tools';
import { createMessageContextReader } from '../db/message-context-reader';
import { createModelCallHistory } from '../db/model-call-history';
import { createToolRunRepository, createToolServices } from '../db/tool-run-repository';
import { createToolProducer, type ToolProducer } from '../jobs/tool-queue';
import { removeJobsOf } from '../jobs/remove-jobs-of';
import { startToolWorker } from '../jobs/start-tool-worker';
import { publishTurnCancel, publishTurnKick, subscribeTurnCancels, subscribeTurnKicks } from '../jobs/turn-kicks';
import { deploymentTools } from '../tools';
import { startMcpServers, type McpHub } from '../mcp';
import { externalTools, runnerSecretOf, SIGNATURE_TOLERANCE_MS } from '../external';
import { createAdminThreadRepository } from '../db/admin-thread-repository';
import { createAuditRepository } from '../db/audit-repository';
import { createDatabase, type Database } from '../db/prisma-client';
import { createForkRepository } from '../db/fork-repository';
import { createFacadeConversationRepository } from '../db/facade-conversation-repository';
import { createMemoryControlsRepository } from '../db/memory-controls-repository';
import { createSavedMemoryRepository } from '../db/saved-memory-repository';
import { createErasureRepository } from '../db/erasure-repository';
import { deleteThread, eraseUser } from '../core/erasure';
import { recountSavedMemoryTokens, saveMemoryFromThread, type SavedMemoryDeps } from '../core/saved-memories';
import { createModelCallRepository } from '../db/model-call-repository';
import { createSummaryRepository } from '../db/summary-repository';
import { createThreadRepository } from '../db/thread-repository';
import { createEstimateCorrection, type EstimateCorrection } from '../core/context';
import type { TokenEstimateDto } from '../shared/admin-api';
import { assertThreadRoom } from '../db/thread-quota';
import { createSearchRepository } from '../db/search-repository';
import { checkSearchLanguage } from '../db/search-settings';
import { createTranscriptRepository } from '../db/transcript-repository';
import { createTurnRepository } from '../db/turn-repository';
import { createAdminAuth } from '../http/admin/admin-auth';
import { createTokenService } from '../auth/token-service';
import { createHttpApp } from '../http/create-http-app';
import { metricsRoutes, observeRequests } from '../http/metrics-routes';
import type { HttpDeps } from '../http/http-deps';
import { createFoldProducer, type FoldProducer } from '../jobs/fold-queue';
import { createProducerConnection, createWorkerConnection, pingRedis } from '../jobs/redis-connections';
import { createSignatureReplayStore } from '../jobs/signature-replay-store';
import { pingDatabase } from '../db/database-health';
import { createSharedRateLimiter, deleteRateLimitKeys } from '../jobs/redis-rate-limiter';
import { removeJobEventsOf } from '../jobs/remove-job-events-of';
import { createMemoryRateLimiter } from '../core/limits/rate-limiter';
import { startFoldWorker } from '../jobs/start-fold-worker';
import { titleThread, type TitleDeps } from '../core/titles';
import { createThreadTitleRepository } from '../db/thread-title-repository';
import { createCostReport } from '../db/cost-report';
import { createQueueRegistry, type BullQueueRegistry } from '../jobs/queue-registry';
import { createSweeper, foldLagPolicy, type Sweeper } from '../jobs/sweeper';
import { createChatModels } from '../llm/create-chat-model';
import { createChatPort, createSummarizerPort, sendsPromptCacheKey } from '../llm/model-ports';
import { anthropicMaxTokens } from '../llm/anthropic-messages-request';
import { createLocalEventBus } from '../realtime/local-event-bus';
import { createSocketServer, type SocketServer } from '../realtime/create-socket-server';
import { forwardThreadEvents } from '../realtime/forward-thread-events';
import { createRedisRoomEmitter } from '../realtime/redis-socket-adapter';
import {
  createMetrics,
  instrumentModelCalls,
  instrumentSummaryStore,
  instrumentTurnStore,
  ObservedTurnRunner,
  observeSocketServer,
  observeWorker,
  startMetricsServer,
  TurnTimer,
  withModelCallContext,
  type Lifecycle,
  type Metrics,
} from '../observability';
import { SUMMARY_QUEUE } from '../jobs/queue-names';
import { contextSettingsFromEnv, usesOfflineDemoWindow } from './context-settings-from-env';
import { withFreshTokenCounts } from './with-fresh-token-counts';
import { createSpendGate, type SpendGate } from '../core/spend-gate/spend-gate';
import { countBackgroundCalls } from '../core/spend-gate/count-background-calls';
import { createSpendLimitAdminRepository, createSpendRepository } from '../db/spend-repository';
import { describeTools } from './describe-tools';
import { credentialsOfUrl, withoutCredentials, type Logger } from './logger';
import { forgetKnownUser } from '../auth/principal-from-token';

export type ProcessMode = 'all' | 'serve' | 'worker';

export interface ApplicationOptions {
  env: Env;
  databaseUrl: string;
  redisUrl: string;
  authSecret: string;
  adminToken: string;
  log: Logger;
  mode: ProcessMode;
  /** Test and benchmark knobs; production uses the defaults. */
  tuning?: {
    sweepIntervalMs?: number;
    stalledIntervalMs?: number;
    lockDurationMs?: number;
    retryBaseMs?: number;
    leaseTtlMs?: number;
    chat?: ChatModelPort;
    summarizer?: SummarizerPort;
    /** Tools added to the deployment's (src/tools/index.ts), e.g. test tools. */
    extraTools?: Tool[];
    /** How often a running tool polls its cancel flag. Default 500 ms. */
    toolCancelPollMs?: number;
    /** First restart delay of a crashed MCP server (default 500 ms). */
    mcpBackoffMs?: number;
    /** Node.js process metrics on /metrics (default true; tests with many apps turn them off). */
    defaultMetrics?: boolean;
    /** The clock of spend periods (tests move it across a reset). Default: the system clock. */
    now?: () => Date;
  };
  /** Serves the browser app (added by the web part). */
  mountStatic?: (app: Express) => void;
}

export interface Application {
  app: Express;
  server: Server;
  db: Database;
  runner: TurnRunner;
  sweeper: Sweeper;
  /** Spend limits (SPEND_LIMITS=on), else undefined. */
  spend: SpendGate | undefined;
  folds: FoldProducer;
  toolQueue: ToolProducer;
  worker: Worker | null;
  toolWorker: Worker | null;
  deps: HttpDeps;
  /** Prometheus metrics of this process (`/metrics`). */
  metrics: Metrics;
  /** The port of the separate unauthenticated `/metrics` listener (METRICS_PORT), if any. */
  metricsPort: number | null;
  /** The socket.io server ('all' and 'serve' modes; null in 'worker' mode). `io.connectedSockets` counts sockets. */
  io: SocketServer | null;
  /** The MCP servers of this process (null when MCP_SERVERS is unset). */
  mcp: McpHub | null;
  /** Queues shown to admins (GET /api/admin/queues, /admin/jobs); other parts register theirs here. */
  queues: BullQueueRegistry;
  /** Listens on `port` (0 = any); resolves with the bound port. */
  listen(port: number, host?: string): Promise<number>;
  /** Graceful stop: stop accepting, drain turns up to the grace period, close workers, queues and pools. */
  stop(graceMs?: number): Promise<void>;
}

/** Past this the estimate is considered broken, not corrected: 1.5 covers the tokenizers of common open models. */
const ESTIMATE_MAX_FACTOR = 1.5;

function tokenEstimateOf(correction: EstimateCorrection | undefined, maxFactor: number): TokenEstimateDto {
  return {
    model: correction?.model ?? '',
    factor: correction?.factor ?? 1,
    maxFactor,
    observedRatio: correction?.observedRatio ?? null,
    samples: correction?.samples ?? 0,
  };
}

/** The summarizer's output cap (`summarizerOutputTokens`), for the summary model's profile. */
function summarizerCap(
  env: Env,
  settings: ReturnType<typeof contextSettingsFromEnv>,
): { summaryMaxOutputTokens: number; summaryReasoning: boolean } {
  const reasoning = env.SUMMARY_MODEL ? getModelProfile(env.SUMMARY_MODEL).reasoning : settings.profile.reasoning;
  const cap = summarizerOutputTokens({
    summaryMaxTokens: settings.summaryMaxTokens,
    toolResultInlineTokens: settings.toolResultInlineTokens,
    reasoning,
  });
  return { summaryMaxOutputTokens: cap, summaryReasoning: reasoning };
}

/** The composition root: the one place where adapters are wired to the core. */
export async function createApplication(options: ApplicationOptions): Promise<Application> {
  const { env, log, mode, tuning = {} } = options;
  const settings = contextSettingsFromEnv(env);
  // Load the tokenizer's ranks now (about a second) rather than on the first user's message.
  settings.counter.countText('warm up');
  const db = createDatabase({ url: options.databaseUrl });
  await checkSearchLanguage(db, env.SEARCH_LANGUAGE, log);
  const threads = createThreadRepository(db);
  const transcript = createTranscriptRepository(db);
  const search = createSearchRepository(db);
  const turns = withFreshTokenCounts(
    createTurnRepository(db, {
      recallTokens: settings.recallTokens,
      userMemoryTokens: settings.userMemoryTokens,
      recallScope: settings.recallScope,
      recallSticky: settings.recallSticky ?? false,
    }),
    settings.counter,
    log,
  );
  const metrics = createMetrics({ log, defaultMetrics: tuning.defaultMetrics ?? true });
  const lifecycle: Lifecycle = { closing: false };
  const summaries = instrumentSummaryStore(createSummaryRepository(db), metrics);
  const spendStore = createSpendRepository(db);
  const spend =
    env.SPEND_LIMITS === 'on'
      ? createSpendGate({
          store: spendStore,
          prices: env.MODEL_PRICES,
          defaults: {
            user: env.SPEND_LIMIT_USER ?? null,
            guest: env.SPEND_LIMIT_GUEST ?? null,
            guestsPerAddress: env.SPEND_LIMIT_GUESTS_PER_ADDRESS ?? null,
          },
          timeZone: env.SPEND_LIMIT_TIMEZONE,
          chatModel: env.CHAT_MODEL,
          holdPromptTokens: settings.budget,
          // Under Claude a thinking call may bill its budget as well (max_tokens covers both).
          answerCap:
            chatProviderOf(env) === 'anthropic'
              ? anthropicMaxTokens(settings.profile.reservedOutputTokens, env.ANTHROPIC_THINKING_BUDGET_TOKENS)
              : settings.profile.reservedOutputTokens,
          writesCache: chatProviderOf(env) === 'anthropic',
          // An unclaimed hold waits at most for the turns queued before it; a call lasts at most a turn.
          holdTtlMs: (env.MAX_QUEUED_TURNS + 1) * env.TURN_TIMEOUT_MS + 60_000,
          callTtlMs: env.TURN_TIMEOUT_MS + 60_000,
          log,
          ...(tuning.now ? { now: tuning.now } : {}),
          onRefused: (reason, stage) => metrics.spendRefusals.inc({ reason, stage }),
        })
      : undefined;
  const instrumentedCalls = instrumentModelCalls(createModelCallRepository(db), metrics);
  const calls = spend ? countBackgroundCalls(instrumentedCalls, spend) : instrumentedCalls;
  const memory = createMemoryControlsRepository(db);
  const events = createLocalEventBus();
  const turnTimer = new TurnTimer(metrics);
  const stopTiming = turnTimer.watch(events);

  const models = createChatModels({
    provider: chatProviderOf(env),
    anthropic: {
      ...(env.ANTHROPIC_API_KEY ? { apiKey: env.ANTHROPIC_API_KEY } : {}),
      ...(env.ANTHROPIC_BASE_URL ? { baseUrl: env.ANTHROPIC_BASE_URL } : {}),
      cacheTtl: anthropicCacheTtl(env.PROMPT_CACHE_TTL),
      ...(env.ANTHROPIC_THINKING_BUDGET_TOKENS !== undefined
        ? { thinkingBudgetTokens: env.ANTHROPIC_THINKING_BUDGET_TOKENS }
        : {}),
    },
    ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
    ...(env.OPENAI_BASE_URL ? { baseUrl: env.OPENAI_BASE_URL } : {}),
    chatModel: env.CHAT_MODEL,
    ...(env.SUMMARY_MODEL ? { summaryModel: env.SUMMARY_MODEL } : {}),
    acceptsTemperature: settings.profile.acceptsTemperature,
    // Answers stop by tokens at the reserve the pack leaves free (reasoning models: reasoning included).
    chatMaxOutputTokens: settings.profile.reservedOutputTokens,
    chatReasoning: settings.profile.reasoning,
    // Summaries and condensed tool results stop by tokens too (a runaway summarizer otherwise runs to the timeout).
    ...summarizerCap(env, settings),
    timeoutMs: env.TURN_TIMEOUT_MS,
  });
  // The chat model's estimate correction, learned from reported usage (seeded from its stored calls below).
  settings.correction = createEstimateCorrection({ model: models.label.model, maxFactor: ESTIMATE_MAX_FACTOR });
  const callHistory = createModelCallHistory(db);
  for (const call of await callHistory.recentPromptCounts({ model: models.label.model, limit: 50 }))
    settings.correction.observe(call.estimated, call.reported, call.ownerId ?? '');
  const promptCacheKey = sendsPromptCacheKey(env.PROMPT_CACHE_KEY, {
    provider: models.label.provider,
    baseUrl: env.OPENAI_BASE_URL,
  });
  const chat = withModelCallContext(
    tuning.chat ?? createChatPort(models.chat, models.label.model, { promptCacheKey }),
    log,
  );
  const summarizer = withModelCallContext(
    tuning.summarizer ?? createSummarizerPort(models.summarizer, models.label.summaryModel, { promptCacheKey }),
    log,
  );
  // A fold continues the chat's prompt only where it reaches the chat's cache: the same model on a real endpoint.
  const foldsContinueChat =
    env.FOLD_PROMPT === 'auto' &&
    models.label.provider !== 'offline' &&
    models.label.summaryModel === models.label.model;
  if (models.label.provider === 'offline')
    log.warn('no OPENAI_API_KEY or OPENAI_BASE_URL: using the built-in OFFLINE model (deterministic demo replies)');
  else
    log.info(
      { model: models.label.model, baseUrl: withoutCredentials(models.label.baseUrl ?? '') },
      'model endpoint configured',
    );
  if (credentialsOfUrl(env.OPENAI_BASE_URL).length > 0) {
    log.warn(
      'OPENAI_BASE_URL carries credentials: they are kept out of the logs, but requests cannot send credentials inside a URL; put the key in OPENAI_API_KEY',
    );
  }
  if (usesOfflineDemoWindow(env)) {
    log.info(
      `offline model: a ${settings.profile.maxInputTokens}-token demo window (set CONTEXT_MAX_INPUT_TOKENS to change it), so the summary forms within about ten turns`,
    );
  }
  log.info(
    {
      contextWindow: settings.profile.maxInputTokens,
      reservedOutputTokens: settings.profile.reservedOutputTokens,
      budget: settings.budget,
      trigger: formatTriggerPolicy(settings.trigger),
      keep: formatCondition(settings.keep),
      summaryMaxTokens: settings.summaryMaxTokens,
      summarizerInputMaxTokens: settings.summarizerInputMaxTokens,
      pinnedMaxTokens: settings.pinnedMaxTokens,
      toolResultInlineTokens: settings.toolResultInlineTokens,
    },
    'context settings',
  );

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
  metrics.sources.queues.push({
    name: SUMMARY_QUEUE,
    getJobCounts: (...states) => folds.queue.getJobCounts(...(states as Parameters<typeof folds.queue.getJobCounts>)),
  });

  const queues = createQueueRegistry();
  queues.register(folds.queue);

  const foldDeps: FoldDeps = { turns, summaries, summarizer, calls, events, settings, log };
  // Chat titles: by the summarizer model in a job of the summary queue; with the offline model (its extractive
  // summarizer makes no title) or CHAT_TITLES=words, from the first message's words at once.
  const titlesFromWords = models.label.provider === 'offline' || env.CHAT_TITLES === 'words';
  const titleDeps: TitleDeps = {
    titles: createThreadTitleRepository(db),
    model: titlesFromWords ? null : summarizer,
    calls,
    events,
    settings,
    log,
  };
  const requestTitle = titlesFromWords
    ? (threadId: string) => titleThread({ threadId }, titleDeps)
    : (threadId: string) => folds.enqueueTitle(threadId);

  // Tools: the registry (deployment tools + extras), the run store (outbox) and the tools queue.
  // Configured tools (MCP servers, external runners) share TOOL_SCHEMA_MAX_TOKENS of the pack; the rest are not offered.
  const schemaCap = env.TOOL_SCHEMA_MAX_TOKENS ?? Math.min(2000, Math.floor(settings.budget / 4));
  // A small window (a local model's 4k, the offline demo's 2k) is offered the built-in tools' short schemas.
  const builtInTools =
    settings.profile.maxInputTokens <= SHORT_TOOL_SCHEMA_WINDOW
      ? deploymentTools(env).map(shortToolSchema)
      : deploymentTools(env);
  const registry = createToolRegistry([...builtInTools, ...(tuning.extraTools ?? [])], {
    maxTokens: schemaCap,
    count: (definition) => settings.counter.countToolSchemas([definition]),
  });
  const mcp =
    env.toolSources.mcpServers.length > 0
      ? await startMcpServers({
          servers: env.toolSources.mcpServers,
          registry,
          log,
          asyncTimeoutMs: env.TOOL_TIMEOUT_MS,
          ...(tuning.mcpBackoffMs !== undefined ? { backoffMs: tuning.mcpBackoffMs } : {}),
        })
      : null;
  if (env.toolSources.externalTools.length > 0 && env.PUBLIC_BASE_URL) {
    registry.setGroup(
      'external',
      externalTools(env.toolSources.externalTools, {
        secret: env.TOOL_WEBHOOK_SECRET,
        publicBaseUrl: env.PUBLIC_BASE_URL,
        timeoutMs: env.TOOL_TIMEOUT_MS,
      }),
      { strict: true },
    );
  }
  for (const entry of registry.describe().filter((candidate) => !candidate.offered)) {
    log.warn(
      { tool: entry.tool.name, schemaTokens: entry.schemaTokens, cap: schemaCap },
      'tool not offered: its schema is past TOOL_SCHEMA_MAX_TOKENS',
    );
  }
  const toolRuns = createToolRunRepository(db);
  const erasures = createErasureRepository(db);
  const savedMemories: SavedMemoryDeps = {
    store: createSavedMemoryRepository(db),
    counter: settings.counter,
    maxItems: env.MAX_MEMORY_ITEMS,
    capTokens: settings.userMemoryTokens,
    writeLimiter: createSharedRateLimiter({
      redis: producerConnection,
      prefix: env.REDIS_PREFIX,
      name: 'memory-write',
      limit: env.MEMORY_WRITES_PER_MINUTE,
      log,
    }),
  };
  // Items counted for the rendering before quoted lines (migration saved_memory_status): recounted in the background.
  recountSavedMemoryTokens(savedMemories).then(
    (recounted) => {
      if (recounted > 0) log.info({ recounted }, 'recounted saved memories for the quoted rendering');
    },
    (error: unknown) => log.warn({ err: error }, 'could not recount saved memories'),
  );
  const baseToolServices = createToolServices(db);
  const toolServices: ToolServices = {
    ...baseToolServices,
    search: {
      ...baseToolServices.search,
      searchElsewhere: (input) => search.searchElsewhere({ ...input, defaultScope: settings.recallScope }),
    },
    saveMemory: async (input) => {
      const status = env.SAVE_MEMORY_TOOL === 'on' ? 'active' : 'pending';
      const outcome = await saveMemoryFromThread({ ...input, status }, savedMemories);
      return 'saved' in outcome
        ? { saved: { id: outcome.saved.id, text: outcome.saved.text, status: outcome.saved.status } }
        : outcome;
    },
  };
  const toolQueue = createToolProducer({
    connection: producerConnection,
    prefix: env.REDIS_PREFIX,
    onError: (error) => log.debug({ err: error }, 'tools queue error'),
  });
  queues.register(toolQueue.queue);
  const condense = {
    summarizer,
    calls,
    inlineTokens: settings.toolResultInlineTokens,
    inputMaxTokens: settings.summarizerInputMaxTokens,
  };
  const toolKit: ToolKit = {
    registry,
    runs: toolRuns,
    queue: toolQueue,
    services: toolServices,
    condense,
    maxRounds: env.MAX_TOOL_ROUNDS,
    limits: {
      callsPerMessage: env.MAX_TOOL_CALLS_PER_MESSAGE,
      followUps: env.MAX_TOOL_FOLLOW_UPS,
      asyncRunsPerThread: env.MAX_ASYNC_RUNS_PER_THREAD,
      asyncRunsPerUser: env.MAX_ASYNC_RUNS_PER_USER,
    },
    inlineTimeoutMs: Math.min(30_000, env.TOOL_TIMEOUT_MS),
    maxResultChars: env.TOOL_RESULT_MAX_CHARS,
  };
  const runner: TurnRunner = new ObservedTurnRunner(
    {
      turns: instrumentTurnStore(turns, { timer: turnTimer, lifecycle, metrics }),
      calls,
      events,
      chat,
      folds,
      idleFolds: folds,
      requestTitle,
      settings,
      log,
      tools: toolKit,
      owner: `${process.pid}-${randomUUID()}`,
      foldNow: async (threadId) => {
        await foldThread({ threadId, author: 'overflow-fallback', force: true }, foldDeps);
      },
      turnTimeoutMs: env.TURN_TIMEOUT_MS,
      maxRetries: env.MODEL_MAX_RETRIES,
      ...(spend ? { spend } : {}),
      ...(tuning.retryBaseMs !== undefined ? { retryBaseMs: tuning.retryBaseMs } : {}),
      ...(tuning.leaseTtlMs !== undefined ? { leaseTtlMs: tuning.leaseTtlMs } : {}),
    },
    lifecycle,
  );
  metrics.sources.turnsInFlight = () => runner.activeCount;
  if (foldsContinueChat) foldDeps.chatPrefix = (context) => runner.chatPrefix(context);

  // A reported tool run queues a follow-up turn in Postgres (the handoff); someone must run it. All-in-one: this
  // process' runner. A worker-only process publishes the thread id; serve processes kick their runner on it.
  // The sweeper picks up queued turns with no live lease in any case (the fallback if a message is lost).
  const onFollowUp = (threadId: string) => {
    if (mode !== 'worker') void runner.kick(threadId);
    else
      publishTurnKick(producerConnection, env.REDIS_PREFIX, threadId).catch((error: unknown) =>
        log.warn({ err: error, threadId }, 'could not publish a turn kick; the sweeper will run the follow-up'),
      );
  };
  const kicks =
    mode !== 'worker'
      ? subscribeTurnKicks({
          url: options.redisUrl,
          prefix: env.REDIS_PREFIX,
          onKick: (threadId) => void runner.kick(threadId),
          onError: (error) => log.debug({ err: error }, 'turn kick subscriber error'),
        })
      : null;
  // Stop reaches the process running the turn, whichever process the user's request landed on.
  const cancels =
    mode !== 'worker'
      ? subscribeTurnCancels({
          url: options.redisUrl,
          prefix: env.REDIS_PREFIX,
          onCancel: (threadId, turnId) => void runner.cancel(threadId, turnId),
          onError: (error) => log.debug({ err: error }, 'turn cancel subscriber error'),
        })
      : null;
  const cancelTurn = async (threadId: string, turnId?: string): Promise<boolean> => {
    if (runner.cancel(threadId, turnId)) return true;
    if (!(await turns.hasRunningTurn(threadId, turnId))) return false;
    await publishTurnCancel(producerConnection, env.REDIS_PREFIX, threadId, turnId);
    return true;
  };

  const asyncToolDeps: AsyncToolDeps = {
    registry,
    runs: toolRuns,
    services: toolServices,
    events,
    log,
    counter: settings.counter,
    condense,
    timeoutMs: env.TOOL_TIMEOUT_MS,
    maxResultChars: env.TOOL_RESULT_MAX_CHARS,
    onFollowUp,
    schedulePoll: (runId, delayMs) => toolQueue.enqueuePoll(runId, delayMs),
    ...(tuning.toolCancelPollMs !== undefined ? { cancelPollMs: tuning.toolCancelPollMs } : {}),
  };

  let worker: Worker | null = null;
  let toolWorker: Worker | null = null;
  let workerConnection: Redis | null = null;
  let toolWorkerConnection: Redis | null = null;
  if (mode !== 'serve') {
    workerConnection = createWorkerConnection(options.redisUrl);
    workerConnection.on('error', (error) => log.debug({ err: error }, 'redis worker connection error'));
    worker = startFoldWorker({
      connection: workerConnection,
      prefix: env.REDIS_PREFIX,
      concurrency: env.WORKER_CONCURRENCY,
      deps: {
        ...foldDeps,
        transcript,
        threads,
        idleFold,
        title: titleDeps,
        ...(spend ? { foldDeferredUntil: (threadId: string) => foldDeferral(threads, spend, threadId) } : {}),
      },
      stalledIntervalMs: tuning.stalledIntervalMs ?? env.WORKER_STALLED_INTERVAL_MS,
      lockDurationMs: tuning.lockDurationMs ?? env.WORKER_LOCK_MS,
    });
    toolWorkerConnection = createWorkerConnection(options.redisUrl);
    toolWorkerConnection.on('error', (error) => log.debug({ err: error }, 'redis tools worker connection error'));
    toolWorker = startToolWorker({
      connection: toolWorkerConnection,
      prefix: env.REDIS_PREFIX,
      concurrency: env.WORKER_CONCURRENCY,
      deps: asyncToolDeps,
      stalledIntervalMs: tuning.stalledIntervalMs ?? env.WORKER_STALLED_INTERVAL_MS,
      lockDurationMs: tuning.lockDurationMs ?? env.WORKER_LOCK_MS,
    });
    observeWorker(worker, metrics, { lag: 'fold' });
  }

  const sweeper = createSweeper({
    turns,
    summaries,
    folds,
    settings,
    log,
    rebuilds: { memory, queue: folds },
    toolRuns: { runs: toolRuns, queue: toolQueue, olderThanMs: 5000 },
    ...(mode !== 'worker' ? { resumeTurns: (threadId: string) => void runner.kick(threadId) } : {}),
    interruptedTurns: env.RESUME_INTERRUPTED_TURNS,
    ...(spend ? { releaseSpend: () => spend.releaseStale() } : {}),
    intervalMs: tuning.sweepIntervalMs ?? env.SWEEP_INTERVAL_MS,
    retention: {
      retentionDays: env.RETENTION_DAYS,
      guestMaxAgeSeconds: env.GUEST_MAX_AGE,
      deleteIdleThreads: (before, limit) => erasures.deleteIdleThreads(before, limit),
      removeJobs: (refs) => removeJobsOf({ queues: [folds.queue as Queue, toolQueue.queue as Queue], ...refs }),
      guestsCreatedBefore: (before, limit) => erasures.guestsCreatedBefore(before, limit),
      eraseGuest: (userId) => deps.eraseUser({ userId, kind: 'guest' }),
    },
  });

  // Per-user and per-address limits live in Redis, so every process counts against one budget.
  const sharedLimit = (name: string, limit: number) =>
    createSharedRateLimiter({ redis: producerConnection, prefix: env.REDIS_PREFIX, name, limit, log });
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
  const sendLimiter = sharedLimit('send', env.RATE_LIMIT_PER_MINUTE);
  const searchLimiter = sharedLimit('search', env.SEARCH_PER_MINUTE);
  const exportLimiter = sharedLimit('export', env.EXPORTS_PER_MINUTE);
  const forkLimiter = sharedLimit('fork', env.FORKS_PER_MINUTE);
  const toolRoundLimiter = sharedLimit('tool-round', env.TOOL_ROUNDS_PER_MINUTE);
  const forks = createForkRepository(db);
  // Bound once the socket server exists (it is built from these deps).
  let sockets: SocketServer | null = null;
  const deps: HttpDeps = {
    log,
    threads,
    transcript,
    search,
    turns,
    runner,
    cancelTurn,
    requestTitle,
    events,
    settings,
    tokens,
    ...(spend && env.SPEND_LIMIT_GROUP_CLAIM ? { claimGroups: spendStore } : {}),
    sendLimiter,
    ...(spend ? { spend } : {}),
    searchLimiter,
    exportLimiter,
    requestLimiter: createMemoryRateLimiter({ limit: env.API_REQUESTS_PER_MINUTE }),
    rateLimits,
    corsCredentials: env.CORS_CREDENTIALS ?? false,
    trustProxy: trustProxySetting(env.TRUST_PROXY),
    probes: {
      postgres: () => pingDatabase(db),
      redis: () => pingRedis(producerConnection),
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
    toolRuns,
    toolQueue,
    toolCallbacks:
      env.toolSources.externalTools.length > 0 && env.PUBLIC_BASE_URL
        ? {
            secretFor: (name) => runnerSecretOf(env.toolSources.externalTools, env.TOOL_WEBHOOK_SECRET, name),
            basePath: new URL(env.PUBLIC_BASE_URL).pathname.replace(/\/+$/, ''),
            deps: asyncToolDeps,
            // Shared by every serve process: a signature is accepted once while its timestamp is valid.
            ...createSignatureReplayStore({
              redis: producerConnection,
              prefix: env.REDIS_PREFIX,
              ttlMs: 2 * SIGNATURE_TOLERANCE_MS,
            }),
          }
        : null,
    toolDefinitions: () => registry.definitions(),
    messageContext: createMessageContextReader(db),
    memory: {
      threads,
      transcript,
      turns,
      memory,
      events,
      settings,
      jobs: folds,
      log,
      exportReader: memory,
      pinnedMaxTokens: settings.pinnedMaxTokens,
      forks,
      sendLimiter,
    },
    fork: {
      threads,
      transcript,
      memory,
      forks,
      turns,
      settings,
      sendLimiter,
      log,
      maxMessageChars: env.MAX_MESSAGE_CHARS,
      maxQueuedTurns: env.MAX_QUEUED_TURNS,
      maxThreadsPerUser: env.MAX_THREADS_PER_USER,
      forkLimiter,
      maxForkMessages: env.FORK_MAX_MESSAGES,
      ...(spend ? { spend } : {}),
      // A fork counts against MAX_THREADS_PER_USER like a new thread (checked early here, exactly when written).
      guards: { beforeNewThread: (userId: string) => assertThreadRoom(db, userId, env.MAX_THREADS_PER_USER) },
    },
    savedMemories,
    erasures,
    deleteThread: (threadId) =>
      deleteThread(threadId, {
        toolRunIdsOf: (id) => erasures.toolRunIdsOfThread(id),
        deleteThread: (id) => threads.deleteThread(id),
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
          sockets?.disconnectUser(userId);
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
    facade: {
      conversations: createFacadeConversationRepository(db),
      serviceKeys: env.OPENAI_FACADE_KEYS,
      models: [env.CHAT_MODEL, ...env.FACADE_MODEL_ALIASES.filter((name) => name !== env.CHAT_MODEL)],
      threadHeaders: env.FACADE_THREAD_HEADERS,
      maxBodyBytes: env.FACADE_MAX_BODY_BYTES,
      maxReadMessages: env.FACADE_MAX_READ_MESSAGES,
      maxClientInstructionsChars: env.MAX_CLIENT_INSTRUCTIONS_CHARS,
      maxToolDescriptionChars: env.MAX_CLIENT_TOOL_DESCRIPTION_CHARS,
      maxBackgroundResponses: env.BACKGROUND_RESPONSES_PER_USER,
      responseIdKey: responseIdKey(options.authSecret),
      compactionKey: compactionKey(options.authSecret),
      fold: (threadId, { force, signal }) => foldThread({ threadId, force, signal }, foldDeps),
      toolRoundLimiter,
      auxiliaryPrefixes: env.FACADE_AUXILIARY_PREFIXES,
      chat,
      calls,
      serverToolNames: () => new Set(registry.list().map((tool) => tool.name)),
      clientThreadTools: () =>
        registry.definitions().filter((definition) => registry.get(definition.function.name)?.mode !== 'async'),
      closing: () => lifecycle.closing,
    },
    admin: {
      auth: createAdminAuth({
        tokens,
        adminToken: options.adminToken,
        authSecret: options.authSecret,
        failures: rateLimits.authFailures,
        secureCookies: env.NODE_ENV === 'production',
        erasures,
      }),
      threads: createAdminThreadRepository(db),
      summaries,
      audit: createAuditRepository(db),
      jobs: folds,
      queues,
      foldLagPolicy: foldLagPolicy(settings),
      modelCalls: callHistory,
      costs: {
        report: createCostReport(db, { timeZone: env.SPEND_LIMIT_TIMEZONE }),
        prices: env.MODEL_PRICES,
        timeZone: env.SPEND_LIMIT_TIMEZONE,
        ...(spend ? { limitOf: (userId: string) => spend.writtenLimitOf(userId) } : {}),
      },
      tokenEstimate: () => tokenEstimateOf(settings.correction, ESTIMATE_MAX_FACTOR),
      tools: () => describeTools(registry, mcp),
      spendLimits: {
        store: createSpendLimitAdminRepository(db),
        enforced: env.SPEND_LIMITS === 'on',
        timeZone: env.SPEND_LIMIT_TIMEZONE,
        prices: env.MODEL_PRICES,
        models: modelsInUse(env),
        defaults: {
          user: env.SPEND_LIMIT_USER ?? null,
          guest: env.SPEND_LIMIT_GUEST ?? null,
          guestsPerAddress: env.SPEND_LIMIT_GUESTS_PER_ADDRESS ?? null,
        },
        serviceKeyIds: env.OPENAI_FACADE_KEYS.map(serviceKeyId),
      },
    },
  };
  const app = createHttpApp(deps, {
    first: (express) => express.use(observeRequests({ metrics, closing: () => lifecycle.closing })),
    beforeApi: (express) =>
      express.use(
        metricsRoutes({
          registry: metrics.registry,
          token: env.METRICS_TOKEN ?? options.adminToken,
          failures: rateLimits.authFailures,
        }),
      ),
    ...(options.mountStatic ? { afterApi: options.mountStatic } : {}),
  });
  // A request (headers and body) must arrive whole within REQUEST_TIMEOUT_MS (checked every second); an answer may
  // stream for longer.
  const server = createServer(
    {
      requestTimeout: env.REQUEST_TIMEOUT_MS,
      headersTimeout: Math.min(env.REQUEST_TIMEOUT_MS, 60_000),
      connectionsCheckingInterval: 1000,
    },
    app,
  );
  const redisRealtime = { url: options.redisUrl, prefix: env.REDIS_PREFIX };
  const cancelRun = async (runId: string, userId: string) =>
    (await cancelToolRun({ runId, userId }, { runs: toolRuns, queue: toolQueue, log })) !== null;
  const io =
    mode === 'worker'
      ? null
      : createSocketServer({
          httpServer: server,
          deps: {
            ...deps,
            cancelToolRun: cancelRun,
            closing: () => lifecycle.closing,
            limits: {
              ...deps.limits,
              socketEventsPerMinute: env.SOCKET_EVENTS_PER_MINUTE,
              maxSocketsPerUser: env.MAX_SOCKETS_PER_USER,
            },
          },
          redis: redisRealtime,
          coalesceMs: env.SOCKET_DELTA_COALESCE_MS,
        });
  // A worker has no sockets: its events (summary-updated) reach the servers' rooms through Redis.
  const roomEmitter = mode === 'worker' ? createRedisRoomEmitter({ ...redisRealtime, log }) : null;
  const stopEmitting = roomEmitter ? forwardThreadEvents({ events, emitter: roomEmitter.emitter, log }).stop : null;
  sockets = io;
  if (io) {
    observeSocketServer(io.io, metrics);
    metrics.sources.activeSockets = () => io.connectedSockets;
  }
  const metricsServer =
    env.METRICS_PORT === undefined
      ? null
      : await startMetricsServer({ registry: metrics.registry, port: env.METRICS_PORT, host: env.METRICS_HOST });

  let stopped = false;
  return {
    app,
    server,
    db,
    runner,
    sweeper,
    spend,
    folds,
    toolQueue,
    worker,
    toolWorker,
    deps,
    io,
    queues,
    metrics,
    mcp,
    metricsPort: metricsServer?.port ?? null,
    async listen(port, host = env.HOST) {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      sweeper.start();
      const address = server.address();
      return typeof address === 'object' && address ? address.port : port;
    },
    async stop(graceMs = env.SHUTDOWN_GRACE_MS) {
      if (stopped) return;
      stopped = true;
      // From here new requests get 503, kicks start nothing and queued turns stay queued for the next process.
      lifecycle.closing = true;
      // A sweep in flight still uses the queues and the database: both close only after it (bounded below).
      const sweeping = sweeper.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Running turns and jobs get the same grace period, side by side.
      await Promise.all([runner.drainAll(graceMs), closeWorker(worker, graceMs, log)]);
      // After the drain, so open tabs still get the end of the answers.
      await io?.close();
      stopEmitting?.();
      roomEmitter?.close();
      server.closeAllConnections();
      await closed;
      kicks?.close();
      cancels?.close();
      // Closing BullMQ objects waits on Redis: bounded, so a Redis outage cannot hang the shutdown.
      const closeWithin = async (what: string, closing: Promise<unknown>) => {
        let timer: NodeJS.Timeout | undefined;
        const gaveUp = await Promise.race([
          closing.then(() => false),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(true), 5000);
          }),
        ]);
        clearTimeout(timer);
        if (gaveUp) log.warn({ what }, 'gave up waiting for a queue or worker to close');
      };
      if (worker) await closeWithin('summary worker', worker.close());
      // Forced: a long tool run is not waited for; its job stalls and another worker runs it again (idempotent by run id).
      if (toolWorker) await closeWithin('tools worker', toolWorker.close(true));
      await metricsServer?.close();
      await mcp?.close();
      stopTiming();
      await closeWithin('sweeper', sweeping);
      await closeWithin('summary queue', folds.close());
      await closeWithin('tools queue', toolQueue.close());
      producerConnection.disconnect();
      workerConnection?.disconnect();
      toolWorkerConnection?.disconnect();
      await db.$disconnect();
    },
  };
}

/**
 * Stops taking jobs and waits up to `graceMs` for the active ones. Past it they are left running until the
 * connections close: their locks expire and another worker takes them over (jobs are idempotent).
 */
async function closeWorker(worker: Worker | null, graceMs: number, log: Logger): Promise<void> {
  if (!worker) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), graceMs);
  });
  const closing = worker.close().then(
    () => 'closed' as const,
    (error: unknown) => {
      log.warn({ err: error }, 'error closing the worker');
      return 'closed' as const;
    },
  );
  if ((await Promise.race([closing, timeout])) === 'timeout')
    log.warn(
      { graceMs },
      'jobs still running after the grace period: they return to the queue when their lock expires',
    );
  clearTimeout(timer);
}

/** When a fold of the thread waits for its owner's spend limit reset (null: run it now; a deleted thread: now, it ends). */
async function foldDeferral(threads: ThreadStore, spend: SpendGate, threadId: string): Promise<Date | null> {
  const thread = await threads.findThread(threadId, null);
  return thread ? spend.foldDeferredUntil(thread.ownerId) : null;
}
