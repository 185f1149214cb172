import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The ids every log line carries while it runs inside a request, a socket event, a turn, a job or a model call.
 * Ids only: never message content or secrets.
 */
export interface LogContext {
  requestId?: string;
  userId?: string;
  socketId?: string;
  event?: string;
  threadId?: string;
  turnId?: string;
  jobId?: string;
  queue?: string;
  purpose?: string;
  model?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

/**
 * Runs `fn` with `fields` added to the current context (or, with `fresh`, instead of it: a turn started by a
 * request outlives it and may run other requests' turns, so it must not carry that request's id).
 */
export function runWithLogContext<T>(fields: LogContext, fn: () => T, options: { fresh?: boolean } = {}): T {
  const parent = options.fresh ? {} : (storage.getStore() ?? {});
  return storage.run({ ...parent, ...fields }, fn);
}

/** The context of the code running now (the same object for the whole request, turn drain or job). */
export function currentLogContext(): LogContext | undefined {
  return storage.getStore();
}

/** Sets or clears fields of the current context (e.g. the user once authenticated, the turn once started). */
export function updateLogContext(fields: Partial<Record<keyof LogContext, string | undefined>>): void {
  const context = storage.getStore();
  if (!context) return;
  for (const [key, value] of Object.entries(fields) as Array<[keyof LogContext, string | undefined]>) {
    if (value === undefined) delete context[key];
    else context[key] = value;
  }
}

/** Runs `fn` in exactly this context object (re-entering a request's context after a stream callback lost it). */
export function runInLogContext<T>(context: LogContext, fn: () => T): T {
  return storage.run(context, fn);
}
