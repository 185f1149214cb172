import { randomUUID } from 'node:crypto';
import type { SpendGate } from '../core/spend-gate/spend-gate';
import { foldThread } from '../core/summary/fold-thread';
import type { AsyncToolDeps } from '../core/tools';
import type { TurnRunner } from '../core/turn/turn-runner';
import { publishTurnCancel, publishTurnKick, subscribeTurnCancels, subscribeTurnKicks } from '../jobs/turn-kicks';
import { instrumentTurnStore, ObservedTurnRunner } from '../observability';
import type { Wiring } from './application';
import type { Models } from './wire-models';
import type { Queues } from './wire-queues';
import type { Observed, Stores } from './wire-stores';
import type { Tools } from './wire-tools';

/** The turn runner, the Redis channels that reach it from other processes, Stop, and what async tool runs use. */
export interface Turns {
  runner: TurnRunner;
  /** Turn kicks from worker processes (null in 'worker' mode). */
  kicks: { close(): void } | null;
  /** Stops asked in another process (null in 'worker' mode). */
  cancels: { close(): void } | null;
  /** Stop: this process' turn, else a running turn of another process through Redis. */
  cancelTurn: (threadId: string, turnId?: string) => Promise<boolean>;
  asyncToolDeps: AsyncToolDeps;
}

export interface TurnParts {
  stores: Stores;
  observed: Observed;
  spend: SpendGate | undefined;
  models: Models;
  queues: Queues;
  tools: Tools;
}

/** Step 5: the turn runner and its kicks, Stop across processes, the async tools' follow-ups. */
export function wireTurns(wiring: Wiring, parts: TurnParts): Turns {
  const { options, env, log, mode, tuning, settings } = wiring;
  const { observed, queues, tools } = parts;
  const { producerConnection } = queues;
  const runner = turnRunnerOf(wiring, parts);
  observed.metrics.sources.turnsInFlight = () => runner.activeCount;
  if (parts.models.foldsContinueChat) queues.foldDeps.chatPrefix = (context) => runner.chatPrefix(context);

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
    if (!(await parts.stores.turns.hasRunningTurn(threadId, turnId))) return false;
    await publishTurnCancel(producerConnection, env.REDIS_PREFIX, threadId, turnId);
    return true;
  };

  const asyncToolDeps: AsyncToolDeps = {
    registry: tools.registry,
    runs: tools.toolRuns,
    services: tools.toolServices,
    events: observed.events,
    log,
    counter: settings.counter,
    condense: tools.condense,
    timeoutMs: env.TOOL_TIMEOUT_MS,
    maxResultChars: env.TOOL_RESULT_MAX_CHARS,
    onFollowUp,
    schedulePoll: (runId, delayMs) => tools.toolQueue.enqueuePoll(runId, delayMs),
    ...(tuning.toolCancelPollMs !== undefined ? { cancelPollMs: tuning.toolCancelPollMs } : {}),
  };
  return { runner, kicks, cancels, cancelTurn, asyncToolDeps };
}

/** The turn runner, observed (metrics, turn timer, the closing flag), owned by this process. */
function turnRunnerOf({ env, log, tuning, settings }: Wiring, parts: TurnParts): TurnRunner {
  const { stores, observed, spend, queues } = parts;
  const { turnTimer, lifecycle, metrics } = observed;
  return new ObservedTurnRunner(
    {
      turns: instrumentTurnStore(stores.turns, { timer: turnTimer, lifecycle, metrics }),
      calls: stores.calls,
      events: observed.events,
      chat: parts.models.chat,
      folds: queues.folds,
      idleFolds: queues.folds,
      requestTitle: queues.requestTitle,
      settings,
      log,
      tools: parts.tools.toolKit,
      owner: `${process.pid}-${randomUUID()}`,
      foldNow: async (threadId) => {
        await foldThread({ threadId, author: 'overflow-fallback', force: true }, queues.foldDeps);
      },
      turnTimeoutMs: env.TURN_TIMEOUT_MS,
      maxRetries: env.MODEL_MAX_RETRIES,
      ...(spend ? { spend } : {}),
      ...(tuning.retryBaseMs !== undefined ? { retryBaseMs: tuning.retryBaseMs } : {}),
      ...(tuning.leaseTtlMs !== undefined ? { leaseTtlMs: tuning.leaseTtlMs } : {}),
    },
    lifecycle,
  );
}
