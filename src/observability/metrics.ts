import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LogPort } from '../core/ports';

/** A queue whose job counts are read at scrape time (BullMQ `Queue.getJobCounts`). */
export interface ObservedQueue {
  name: string;
  getJobCounts(...states: string[]): Promise<Record<string, number>>;
}

/**
 * What the metrics read at scrape time. The composition root fills these in as the parts exist
 * (the socket server after the HTTP server, the queues of each job kind).
 */
export interface MetricsSources {
  activeSockets: () => number;
  turnsInFlight: () => number;
  queues: ObservedQueue[];
}

const SECONDS_FAST = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];
const SECONDS_SLOW = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300];
const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed'];

type Registers = Registry[];

/** A turn's latency and its time to the first token. */
function turnMetrics(registers: Registers) {
  return {
    turnDuration: new Histogram({
      name: 'chat_turn_duration_seconds',
      help: 'Turn latency: start of the turn to its end, by final status.',
      labelNames: ['status'],
      buckets: SECONDS_SLOW,
      registers,
    }),
    timeToFirstToken: new Histogram({
      name: 'chat_turn_first_token_seconds',
      help: 'Start of the turn to the first streamed token of its answer.',
      buckets: SECONDS_FAST,
      registers,
    }),
  };
}

/** Model calls: their count, latency and tokens (estimated, reported, cached). */
function modelCallMetrics(registers: Registers) {
  return {
    modelCalls: new Counter({
      name: 'chat_model_calls_total',
      help: 'Model calls by model, purpose (chat, summary, condense, title) and outcome (ok, error).',
      labelNames: ['model', 'purpose', 'outcome'],
      registers,
    }),
    modelCallDuration: new Histogram({
      name: 'chat_model_call_duration_seconds',
      help: 'Model call latency by model and purpose.',
      labelNames: ['model', 'purpose'],
      buckets: SECONDS_SLOW,
      registers,
    }),
    tokens: new Counter({
      name: 'chat_model_tokens_total',
      help: 'Tokens in (prompt: reported by the provider, else our estimate) and out (completion, reported) by model and purpose.',
      labelNames: ['model', 'purpose', 'direction'],
      registers,
    }),
    estimatedPromptTokens: new Counter({
      name: 'chat_model_estimated_prompt_tokens_total',
      help: 'Prompt tokens as our token counter estimated them before the call.',
      labelNames: ['model', 'purpose'],
      registers,
    }),
    cachedPromptTokens: new Counter({
      name: 'chat_model_cached_prompt_tokens_total',
      help: 'Prompt tokens the provider reported as read from its prompt cache (calls that reported it).',
      labelNames: ['model', 'purpose'],
      registers,
    }),
    cacheWritePromptTokens: new Counter({
      name: 'chat_model_cache_write_prompt_tokens_total',
      help: 'Prompt tokens the provider reported as written to its prompt cache (Claude; calls that reported it).',
      labelNames: ['model', 'purpose'],
      registers,
    }),
    reportedPromptTokens: new Counter({
      name: 'chat_model_reported_prompt_tokens_total',
      help: 'Prompt tokens as the provider reported them (calls with a usage report only).',
      labelNames: ['model', 'purpose'],
      registers,
    }),
    estimateRatio: new Histogram({
      name: 'chat_prompt_token_estimate_ratio',
      help: 'Estimated / reported prompt tokens per call with a usage report (1 = exact, above 1 = overestimate).',
      labelNames: ['model', 'purpose'],
      buckets: [0.5, 0.8, 0.9, 0.95, 0.98, 1, 1.02, 1.05, 1.1, 1.25, 1.5, 2],
      registers,
    }),
  };
}

/** Summary folds: their count, duration, size, lag and backlog. */
function foldMetrics(registers: Registers) {
  return {
    folds: new Counter({
      name: 'chat_folds_total',
      help: 'Committed summary folds by author (fold, overflow-fallback, rebuild, admin).',
      labelNames: ['author'],
      registers,
    }),
    foldDuration: new Histogram({
      name: 'chat_fold_duration_seconds',
      help: 'Time a fold took: planning, summarizer calls and checks, up to the commit.',
      labelNames: ['author'],
      buckets: SECONDS_SLOW,
      registers,
    }),
    foldEntries: new Histogram({
      name: 'chat_fold_entries',
      help: 'Window entries folded into the summary per fold.',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
      registers,
    }),
    foldLag: new Histogram({
      name: 'chat_fold_lag_seconds',
      help: 'Fold job lag: enqueued to finished (queue wait + run), in the worker that ran it.',
      buckets: SECONDS_SLOW,
      registers,
    }),
    foldBacklog: new Gauge({
      name: 'chat_fold_backlog_threads',
      help: 'Threads whose window was over the fold trigger at the last sweep (capped at the sweep limit, 500).',
      registers,
    }),
  };
}

/** Failed jobs, rate-limited requests and HTTP responses. */
function jobAndRequestMetrics(registers: Registers) {
  return {
    failedJobs: new Counter({
      name: 'chat_jobs_failed_total',
      help: 'Job attempts that failed in this process, by queue; final=true when no retry is left.',
      labelNames: ['queue', 'final'],
      registers,
    }),
    rateLimited: new Counter({
      name: 'chat_rate_limited_total',
      help: 'Requests answered RATE_LIMITED, by transport (http, socket).',
      labelNames: ['transport'],
      registers,
    }),
    httpResponses: new Counter({
      name: 'chat_http_responses_total',
      help: 'HTTP responses by method and status code.',
      labelNames: ['method', 'status'],
      registers,
    }),
  };
}

/** The gauges read at scrape time: each queue's jobs by state, the open sockets, the turns in flight. */
function registerScrapeGauges(registers: Registers, sources: MetricsSources, log: LogPort): void {
  new Gauge({
    name: 'chat_queue_jobs',
    help: 'Jobs per queue and state (read from Redis at scrape time; the same for every process).',
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      this.reset();
      await Promise.all(
        sources.queues.map(async (queue) => {
          try {
            const counts = await queue.getJobCounts(...QUEUE_STATES);
            for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
          } catch (error) {
            // Redis down: the queue's series are absent from this scrape rather than failing all of it.
            log.debug({ err: error, queue: queue.name }, 'could not read queue counts for /metrics');
          }
        }),
      );
    },
  });
  new Gauge({
    name: 'chat_active_sockets',
    help: 'Socket.io connections open on this process.',
    registers,
    collect() {
      this.set(sources.activeSockets());
    },
  });
  new Gauge({
    name: 'chat_turns_in_flight',
    help: 'Turns streaming in this process now.',
    registers,
    collect() {
      this.set(sources.turnsInFlight());
    },
  });
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * The process' Prometheus metrics, on their own registry (several apps can share a test process).
 * Names are `chat_*`; the default Node.js process metrics come with the same prefix unless turned off.
 */
export function createMetrics(options: { log: LogPort; defaultMetrics?: boolean }) {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'chat_' });
  const sources: MetricsSources = { activeSockets: () => 0, turnsInFlight: () => 0, queues: [] };
  const registers = [registry];

  const metrics = {
    registry,
    sources,
    ...turnMetrics(registers),
    ...modelCallMetrics(registers),
    spendRefusals: new Counter({
      name: 'chat_spend_refusals_total',
      help: "Sends (stage send) and a turn's later model calls (stage call) refused by a spend limit, by the limit's source (user, group, default, address).",
      labelNames: ['reason', 'stage'],
      registers,
    }),
    ...foldMetrics(registers),
    ...jobAndRequestMetrics(registers),
  };

  registerScrapeGauges(registers, sources, options.log);
  return metrics;
}
