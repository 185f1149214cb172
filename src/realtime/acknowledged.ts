import type { z } from 'zod';
import type { LogPort } from '../core/ports';
import { AppError, isAppError } from '../core/errors/app-error';
import type { RateLimiter } from '../core/limits/rate-limiter';
import type { ErrorBody } from '../shared/errors';
import { toAppError } from '../errors/to-app-error';
import type { TypedSocket } from './socket-types';

/**
 * A result built synchronously right before the ack is sent, so no event emitted to the socket can fall
 * between reading the state and answering (thread-join: the streaming text so far).
 */
export class AtAck<T> {
  constructor(readonly build: () => T) {}
}

export interface HandlerContext<P> {
  socket: TypedSocket;
  userId: string;
  payload: P;
}

/** The error of a failed ack: AppErrors keep their code and safe message; anything else is INTERNAL, logged, not shown. */
export function toAckError(
  error: unknown,
  log: LogPort,
  context: { event: string; userId: string },
): ErrorBody & Record<string, unknown> {
  if (isAppError(error)) return { ...error.details, code: error.code, message: error.message };
  // The same mapping as REST: an unreachable database is a retryable UNAVAILABLE, not an INTERNAL.
  const mapped = toAppError(error);
  if (mapped.code === 'INTERNAL') {
    log.error({ err: error, ...context }, 'socket event failed');
    return { code: 'INTERNAL', message: 'Something went wrong on our side.' };
  }
  log.warn({ err: error, ...context, code: mapped.code }, 'socket event failed');
  return { ...mapped.details, code: mapped.code, message: mapped.message };
}

function validationError(error: z.ZodError): AppError {
  const issue = error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  return new AppError('VALIDATION', `Invalid payload: ${where}${issue?.message ?? 'malformed'}`);
}

/**
 * Wraps a client event handler: validates the payload with `schema` (VALIDATION ack, nothing done), runs it,
 * and acknowledges `{ ok: true, ...result }` or `{ ok: false, error }`. A call without an ack callback still
 * runs and never throws; a handler error never reaches socket.io. With a limiter, an event past the socket's rate
 * is refused before its payload is even read.
 */
export function acknowledged<S extends z.ZodType, R extends object>(options: {
  event: string;
  socket: TypedSocket;
  schema: S;
  log: LogPort;
  run: (context: HandlerContext<z.infer<S>>) => Promise<R | AtAck<R>>;
  /** SOCKET_EVENTS_PER_MINUTE, keyed by socket id: past it the event is answered RATE_LIMITED and not run. */
  limiter?: RateLimiter;
}): (...args: unknown[]) => void {
  const { event, socket, schema, log, run, limiter } = options;
  return (...args) => {
    const last = args.at(-1);
    const ack = typeof last === 'function' ? (last as (response: unknown) => void) : null;
    const payload = ack ? args.slice(0, -1)[0] : args[0];
    const userId = socket.data.userId;
    const respond = (response: unknown) => {
      if (!ack) return;
      try {
        ack(response);
      } catch (error) {
        log.warn({ err: error, event, userId }, 'could not send a socket ack');
      }
    };
    const handle = async () => {
      const decision = limiter ? await limiter.hit(socket.id) : { allowed: true as const };
      if (!decision.allowed) {
        throw new AppError(
          'RATE_LIMITED',
          `Too many events on this connection; try again in ${decision.retryAfterSeconds} s.`,
          { details: { retryAfterSeconds: decision.retryAfterSeconds } },
        );
      }
      const parsed = schema.safeParse(payload);
      if (!parsed.success) throw validationError(parsed.error);
      const result = await run({ socket, userId, payload: parsed.data });
      respond({ ok: true, ...(result instanceof AtAck ? (result.build() as R) : result) });
    };
    handle().catch((error: unknown) => respond({ ok: false, error: toAckError(error, log, { event, userId }) }));
  };
}
