import type { LogPort, ThreadEventBus } from '../core/ports';
import type { ThreadEvent, ThreadEventType } from '../shared/events';
import type { ServerToClientEvents } from '../shared/socket-events';
import { createDeltaCoalescer, DEFAULT_COALESCE_MS } from './coalesce-deltas';
import { roomOf } from './socket-types';

/** A thread event as its socket payload: the event without `type`. */
type PayloadOf<T extends ThreadEventType> = Omit<Extract<ThreadEvent, { type: T }>, 'type'>;

/** Compile-time check that every thread event is a server-to-client socket event with a matching payload. */
type Matches = { [T in ThreadEventType]: PayloadOf<T> extends Parameters<ServerToClientEvents[T]>[0] ? true : never };
const eventsMatchSocketMap: Matches[ThreadEventType] = true;
void eventsMatchSocketMap;

/** What can emit to a room: a socket.io server (through its adapter) or a Redis emitter (worker processes). */
export interface RoomEmitter {
  to(room: string): { emit(event: string, payload: object): unknown };
}

export interface ThreadEventForwarding {
  /** Sends the thread's deltas still waiting to be coalesced (before a joining tab reads the text so far). */
  flush(threadId: string): void;
  /** Sends what waits and stops forwarding. */
  stop(): void;
}

/**
 * Forwards every event published on this process' bus to the thread's room, once. Other processes do the same
 * with their own events; the Redis adapter carries each emit to the sockets connected elsewhere, so an event
 * reaches each tab exactly once. A streaming message's deltas are coalesced per `coalesceMs` (default 50 ms; see
 * createDeltaCoalescer): the first goes out at once, the rest in fewer frames, and every other event of the thread
 * waits for them.
 */
export function forwardThreadEvents(options: {
  events: ThreadEventBus;
  emitter: RoomEmitter;
  log: LogPort;
  coalesceMs?: number;
}): ThreadEventForwarding {
  const { events, emitter, log } = options;
  const coalescer = createDeltaCoalescer({
    windowMs: options.coalesceMs ?? DEFAULT_COALESCE_MS,
    emit: (event) => {
      const { type, ...payload } = event;
      try {
        emitter.to(roomOf(event.threadId)).emit(type, payload);
      } catch (error) {
        // A listener must never break the publisher (the turn runner).
        log.warn({ err: error, threadId: event.threadId, type }, 'could not forward a thread event to sockets');
      }
    },
  });
  const unsubscribe = events.subscribeAll((event) => coalescer.push(event));
  return {
    flush: (threadId) => coalescer.flush(threadId),
    stop() {
      unsubscribe();
      coalescer.flushAll();
    },
  };
}
