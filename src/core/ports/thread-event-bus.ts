import type { ThreadEvent } from '../../shared/events';

/** Publishes thread events to every subscriber (sockets in any process, SSE responses). */
export interface ThreadEventBus {
  publish(event: ThreadEvent): void;
  subscribe(threadId: string, listener: (event: ThreadEvent) => void): () => void;
  /** Every thread's events (the socket server forwards them to rooms); returns the unsubscribe. */
  subscribeAll(listener: (event: ThreadEvent) => void): () => void;
}
