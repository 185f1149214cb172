import { EventEmitter } from 'node:events';
import type { ThreadEventBus } from '../core/ports';
import type { ThreadEvent } from '../shared/events';

const ALL = Symbol('all threads');

/**
 * Thread events within this process. Socket rooms across processes go through socket.io's Redis adapter
 * (see realtime/forward-thread-events.ts); this bus feeds the local socket server and SSE responses.
 */
export function createLocalEventBus(): ThreadEventBus & { listenerCount(threadId: string): number } {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    publish(event: ThreadEvent) {
      emitter.emit(event.threadId, event);
      emitter.emit(ALL, event);
    },
    subscribe(threadId, listener) {
      emitter.on(threadId, listener);
      return () => emitter.off(threadId, listener);
    },
    subscribeAll(listener) {
      emitter.on(ALL, listener);
      return () => emitter.off(ALL, listener);
    },
    listenerCount: (threadId) => emitter.listenerCount(threadId),
  };
}
