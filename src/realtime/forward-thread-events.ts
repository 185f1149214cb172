import type { LogPort, ThreadEventBus } from '../core/ports';
import type { ThreadEvent, ThreadEventType } from '../shared/events';
import type { ServerToClientEvents } from '../shared/socket-events';
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

/**
 * Forwards every event published on this process' bus to the thread's room, once. Other processes do the same
 * with their own events; the Redis adapter carries each emit to the sockets connected elsewhere, so an event
 * reaches each tab exactly once. Returns the unsubscribe.
 */
export function forwardThreadEvents(options: { events: ThreadEventBus; emitter: RoomEmitter; log: LogPort }): () => void {
  const { events, emitter, log } = options;
  return events.subscribeAll((event) => {
    const { type, ...payload } = event;
    try {
      emitter.to(roomOf(event.threadId)).emit(type, payload);
    } catch (error) {
      // A listener must never break the publisher (the turn runner).
      log.warn({ err: error, threadId: event.threadId, type }, 'could not forward a thread event to sockets');
    }
  });
}
