import type { Request, Response } from 'express';
import { AppError } from '../core/errors/app-error';
import type { Turn } from '../core/domain/types';
import type { ThreadEvent } from '../shared/events';
import type { HttpDeps } from './http-deps';

const ENDED = new Set(['complete', 'error', 'cancelled']);

/**
 * Resolves when the turn has ended (or already had). `fresh`: the caller has just queued the turn and nothing has
 * kicked a runner yet, so it cannot have ended before this subscription and its stored state is not read.
 */
export function turnEnded(
  deps: HttpDeps,
  turn: Turn,
  onEvent?: (event: ThreadEvent) => void,
  options: { fresh?: boolean } = {},
): { done: Promise<void>; stop(): void; readonly ended: boolean } {
  let stop = () => {};
  let ended = false;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new AppError('PROVIDER_TIMEOUT', 'The answer is taking too long; it will still appear in the thread.')),
      deps.limits.turnTimeoutMs + 15_000,
    );
    const unsubscribe = deps.events.subscribe(turn.threadId, (event) => {
      onEvent?.(event);
      if (event.type === 'turn-end' && event.turnId === turn.id) finish();
    });
    function finish() {
      ended = true;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    }
    stop = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    // The turn may have ended before we subscribed (a repeated clientMessageId).
    if (options.fresh) return;
    deps.turns.findTurn(turn.id).then((current) => {
      if (current && ENDED.has(current.status)) finish();
    }, reject);
  });
  return {
    done,
    stop: () => stop(),
    get ended() {
      return ended;
    },
  };
}

/** A JSON answer's wait: until the accepted turn ends, or the client goes away. */
export async function waitForTurnEnd(
  deps: HttpDeps,
  accepted: { turn: Turn; duplicate: boolean },
  request: Request,
  response: Response,
): Promise<void> {
  const waiter = turnEnded(deps, accepted.turn, undefined, { fresh: !accepted.duplicate });
  request.on('close', () => {
    if (!response.writableEnded) waiter.stop();
  });
  try {
    await untilTurnEnds(deps, accepted, waiter);
  } finally {
    waiter.stop();
  }
}

/**
 * Kicks this process' runner and waits for the turn's end. If the runner finished its queue without running our
 * turn (the database failed under it, or another process holds the thread), the turn's stored state decides:
 * an unreachable database surfaces as a retryable UNAVAILABLE; otherwise we keep waiting for whoever runs it.
 */
export async function untilTurnEnds(
  deps: HttpDeps,
  accepted: { turn: Turn; duplicate: boolean },
  waiter: { done: Promise<void>; readonly ended: boolean },
): Promise<void> {
  if (accepted.duplicate) return waiter.done;
  const drained = deps.runner.kick(accepted.turn.threadId).then(async () => {
    if (waiter.ended) return;
    const turn = await deps.turns.findTurn(accepted.turn.id);
    if (turn && ENDED.has(turn.status)) return;
    await waiter.done;
  });
  await Promise.race([waiter.done, drained]);
}
