import { chatProviderOf } from '../config/env';
import { countBackgroundCalls } from '../core/spend-gate/count-background-calls';
import { createSpendGate, type SpendGate } from '../core/spend-gate/spend-gate';
import { createErasureRepository } from '../db/erasure-repository';
import { createMemoryControlsRepository } from '../db/memory-controls-repository';
import { createModelCallRepository } from '../db/model-call-repository';
import { createDatabase, type Database } from '../db/prisma-client';
import { createSearchRepository } from '../db/search-repository';
import { checkSearchLanguage } from '../db/search-settings';
import { createSpendRepository } from '../db/spend-repository';
import { createSummaryRepository } from '../db/summary-repository';
import { createThreadRepository } from '../db/thread-repository';
import { createTranscriptRepository } from '../db/transcript-repository';
import { createTurnRepository } from '../db/turn-repository';
import { anthropicMaxTokens } from '../llm/anthropic-messages-request';
import {
  createMetrics,
  instrumentModelCalls,
  instrumentSummaryStore,
  TurnTimer,
  type Lifecycle,
  type Metrics,
} from '../observability';
import { createLocalEventBus } from '../realtime/local-event-bus';
import type { Wiring } from './application';
import { withFreshTokenCounts } from './with-fresh-token-counts';

/** The database and its repositories (the summaries and model calls counted by the process' metrics). */
export interface Stores {
  db: Database;
  threads: ReturnType<typeof createThreadRepository>;
  transcript: ReturnType<typeof createTranscriptRepository>;
  search: ReturnType<typeof createSearchRepository>;
  /** Every context it loads has counts of the configured encoding (withFreshTokenCounts). */
  turns: ReturnType<typeof withFreshTokenCounts>;
  summaries: ReturnType<typeof createSummaryRepository>;
  spendStore: ReturnType<typeof createSpendRepository>;
  /** Model call records (background calls counted against spend limits when they are on). */
  calls: ReturnType<typeof instrumentModelCalls>;
  memory: ReturnType<typeof createMemoryControlsRepository>;
  erasures: ReturnType<typeof createErasureRepository>;
}

/** The process' metrics, its closing flag, its event bus and the turn timer watching it. */
export interface Observed {
  metrics: Metrics;
  lifecycle: Lifecycle;
  events: ReturnType<typeof createLocalEventBus>;
  turnTimer: TurnTimer;
  /** Stops the turn timer's watch of the events. */
  stopTiming: () => void;
}

/** Step 1: the database (its search language checked), the repositories, the metrics and the spend gate. */
export async function wireStores(
  wiring: Wiring,
): Promise<{ stores: Stores; observed: Observed; spend: SpendGate | undefined }> {
  const { env, log, tuning, settings } = wiring;
  const db = createDatabase({ url: wiring.options.databaseUrl });
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
  const spend = env.SPEND_LIMITS === 'on' ? spendGateOf(wiring, spendStore, metrics) : undefined;
  const instrumentedCalls = instrumentModelCalls(createModelCallRepository(db), metrics);
  const calls = spend ? countBackgroundCalls(instrumentedCalls, spend) : instrumentedCalls;
  const memory = createMemoryControlsRepository(db);
  const erasures = createErasureRepository(db);
  const events = createLocalEventBus();
  const turnTimer = new TurnTimer(metrics);
  const stopTiming = turnTimer.watch(events);
  return {
    stores: { db, threads, transcript, search, turns, summaries, spendStore, calls, memory, erasures },
    observed: { metrics, lifecycle, events, turnTimer, stopTiming },
    spend,
  };
}

/** The spend limits (SPEND_LIMITS=on) over their store. */
function spendGateOf(
  { env, log, tuning, settings }: Wiring,
  store: ReturnType<typeof createSpendRepository>,
  metrics: Metrics,
): SpendGate {
  return createSpendGate({
    store,
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
  });
}
