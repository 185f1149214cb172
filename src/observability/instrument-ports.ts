import type {
  ChatModelPort,
  ChatResult,
  LogPort,
  ModelCallRecord,
  ModelCallStore,
  NextTurn,
  SummarizerPort,
  SummaryStore,
  TurnStore,
} from '../core/ports';
import { runWithLogContext, updateLogContext } from './log-context';
import type { Metrics } from './metrics';
import type { TurnTimer } from './turn-timer';

/** Model call metrics of one recorded call. */
function observeModelCall(metrics: Metrics, call: ModelCallRecord): void {
  const labels = { model: call.model, purpose: call.purpose };
  metrics.modelCalls.inc({ ...labels, outcome: call.error ? 'error' : 'ok' });
  if (call.latencyMs !== null) metrics.modelCallDuration.observe(labels, call.latencyMs / 1000);
  metrics.estimatedPromptTokens.inc(labels, call.estimatedPromptTokens);
  metrics.tokens.inc({ ...labels, direction: 'in' }, call.reportedPromptTokens ?? call.estimatedPromptTokens);
  if (call.reportedCompletionTokens !== null)
    metrics.tokens.inc({ ...labels, direction: 'out' }, call.reportedCompletionTokens);
  if (call.reportedCachedTokens !== undefined && call.reportedCachedTokens !== null)
    metrics.cachedPromptTokens.inc(labels, call.reportedCachedTokens);
  if (call.reportedCacheWriteTokens !== undefined && call.reportedCacheWriteTokens !== null)
    metrics.cacheWritePromptTokens.inc(labels, call.reportedCacheWriteTokens);
  if (call.reportedPromptTokens !== null && call.reportedPromptTokens > 0) {
    metrics.reportedPromptTokens.inc(labels, call.reportedPromptTokens);
    metrics.estimateRatio.observe(labels, call.estimatedPromptTokens / call.reportedPromptTokens);
  }
}

/**
 * Model call metrics from every recorded call (summary, condense, failed chat calls), then the store's own write.
 * A chat call that produced an answer is stored with it (TurnStore.finishMessage): instrumentTurnStore counts it.
 */
export function instrumentModelCalls(store: ModelCallStore, metrics: Metrics): ModelCallStore {
  return {
    ...store,
    async record(call) {
      observeModelCall(metrics, call);
      await store.record(call);
    },
  };
}

/** Fold count, duration and size from each committed revision; the fold backlog from the sweeper's query. */
export function instrumentSummaryStore(store: SummaryStore, metrics: Metrics): SummaryStore {
  return {
    ...store,
    async commit(commit) {
      const result = await store.commit(commit);
      if (result.committed) {
        metrics.folds.inc({ author: commit.author });
        if (commit.durationMs !== null)
          metrics.foldDuration.observe({ author: commit.author }, commit.durationMs / 1000);
        metrics.foldEntries.observe(commit.foldedSeqs.length);
      }
      return result;
    },
    async threadsNeedingFold(input) {
      const threads = await store.threadsNeedingFold(input);
      metrics.foldBacklog.set(threads.length);
      return threads;
    },
  };
}

/** Shutdown state shared by the composition root and the turn store wrapper. */
export interface Lifecycle {
  /** Set when the process stops: no new turn starts here (queued ones stay queued for another process). */
  closing: boolean;
}

/**
 * The turn store as the turn runner sees it: times turns, names the running turn in the log context of its
 * drain, and once the process is closing hands out no more turns, so a drain ends after its running turn and
 * the queued ones wait in Postgres for the next process (its sweeper resumes them).
 */
export function instrumentTurnStore(
  store: TurnStore,
  options: { timer: TurnTimer; lifecycle: Lifecycle; metrics: Metrics },
): TurnStore {
  const { timer, lifecycle, metrics } = options;
  const started = (next: NextTurn): NextTurn => {
    if (next.outcome === 'started') {
      timer.turnStarted(next.turn.id);
      updateLogContext({ turnId: next.turn.id });
    }
    return next;
  };
  return {
    ...store,
    async finishMessage(input) {
      const message = await store.finishMessage(input);
      if (input.call) observeModelCall(metrics, input.call);
      return message;
    },
    async nextTurn(input) {
      if (lifecycle.closing) {
        // Queued turns stay queued for the next process: the lease (if ours) is let go at once.
        await store.releaseLease(input);
        return { outcome: 'idle' };
      }
      return started(await store.nextTurn(input));
    },
    async finishTurn(input) {
      const turn = await store.finishTurn(input);
      timer.turnEnded(input.turnId, input.status);
      updateLogContext({ turnId: undefined });
      return turn;
    },
    async completeTurn(input) {
      const completed = await store.completeTurn({
        ...input,
        startNext: input.startNext !== false && !lifecycle.closing,
      });
      timer.turnEnded(input.turnId, 'complete');
      updateLogContext({ turnId: undefined });
      return { ...completed, next: started(completed.next) };
    },
    // While closing, "nothing queued" ends the runner's drain loop instead of spinning on turns it may not start.
    async hasQueuedTurns(threadId) {
      if (lifecycle.closing) return false;
      return store.hasQueuedTurns(threadId);
    },
    async releaseLease(input) {
      const queued = await store.releaseLease(input);
      return queued && !lifecycle.closing;
    },
  };
}

/**
 * Log lines written during a model call carry its purpose and model (and the turn's or job's ids around it);
 * each call ends with a debug line of its duration and usage (never its content).
 */
export function withModelCallContext<P extends ChatModelPort | SummarizerPort>(port: P, log: LogPort): P {
  const timed = async (purpose: string, model: string, call: () => Promise<ChatResult>): Promise<ChatResult> =>
    runWithLogContext({ purpose, model }, async () => {
      const started = performance.now();
      try {
        const result = await call();
        log.debug(
          {
            ms: Math.round(performance.now() - started),
            promptTokens: result.usage?.promptTokens ?? null,
            completionTokens: result.usage?.completionTokens ?? null,
          },
          'model call finished',
        );
        return result;
      } catch (error) {
        log.debug({ ms: Math.round(performance.now() - started), err: error }, 'model call failed');
        throw error;
      }
    });
  if ('stream' in port) {
    const chat = port as ChatModelPort;
    return {
      ...chat,
      model: chat.model,
      stream: (input) => timed('chat', chat.model, () => chat.stream(input)),
    } satisfies ChatModelPort as P;
  }
  const summarizer = port as SummarizerPort;
  return {
    ...summarizer,
    model: summarizer.model,
    summarize: (input) => timed('summary', summarizer.model, () => summarizer.summarize(input)),
  } satisfies SummarizerPort as P;
}
