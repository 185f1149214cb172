import { Redis } from 'ioredis';

/**
 * Cross-process "this thread has a queued turn" signal. A tools worker that queued a follow-up turn cannot run
 * it (the turn runner lives in serve processes): it publishes the thread id, and every serve process kicks its
 * runner; the thread's lease lets exactly one of them run it. The sweeper is the fallback if a message is lost.
 */
export function turnKicksChannel(prefix: string): string {
  return `${prefix}:turn-kicks`;
}

export function publishTurnKick(connection: Redis, prefix: string, threadId: string): Promise<number> {
  return connection.publish(turnKicksChannel(prefix), threadId);
}

/** Subscribes on a connection of its own (a subscribed connection can do nothing else). */
export function subscribeTurnKicks(options: {
  url: string;
  prefix: string;
  onKick: (threadId: string) => void;
  onError?: (error: Error) => void;
}): { close(): void } {
  const subscriber = new Redis(options.url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  subscriber.on('error', (error) => options.onError?.(error));
  const channel = turnKicksChannel(options.prefix);
  subscriber.subscribe(channel).catch((error: unknown) => options.onError?.(error as Error));
  subscriber.on('message', (received: string, threadId: string) => {
    if (received === channel && /^[0-9a-f-]{36}$/i.test(threadId)) options.onKick(threadId);
  });
  return { close: () => subscriber.disconnect() };
}

/**
 * Cross-process Stop: a serve process asked to cancel a turn another process runs publishes the thread id here;
 * every serve process cancels what it runs on that thread (at most one runs it: the lease).
 */
export function turnCancelsChannel(prefix: string): string {
  return `${prefix}:turn-cancels`;
}

/** Asks every process to stop the thread's running answer; with `turnId`, only when that turn is the one running. */
export function publishTurnCancel(
  connection: Redis,
  prefix: string,
  threadId: string,
  turnId?: string,
): Promise<number> {
  return connection.publish(turnCancelsChannel(prefix), turnId === undefined ? threadId : `${threadId}:${turnId}`);
}

const CANCEL_MESSAGE = /^([0-9a-f-]{36})(?::([0-9a-f-]{36}))?$/i;

/** Subscribes on a connection of its own. */
export function subscribeTurnCancels(options: {
  url: string;
  prefix: string;
  onCancel: (threadId: string, turnId?: string) => void;
  onError?: (error: Error) => void;
}): { close(): void } {
  const subscriber = new Redis(options.url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  subscriber.on('error', (error) => options.onError?.(error));
  const channel = turnCancelsChannel(options.prefix);
  subscriber.subscribe(channel).catch((error: unknown) => options.onError?.(error as Error));
  subscriber.on('message', (received: string, message: string) => {
    const parsed = received === channel ? CANCEL_MESSAGE.exec(message) : null;
    if (parsed?.[1]) options.onCancel(parsed[1], parsed[2]);
  });
  return { close: () => subscriber.disconnect() };
}
