import type { ThreadEventBus } from '../../src/core/ports';
import type { ThreadEvent } from '../../src/shared/events';

/**
 * ThreadEventBus in memory, synchronous like the process's local bus, that also keeps every published event
 * (`published`) for assertions (test/contracts/event-bus.contract.ts holds it to the local bus's behaviour).
 */
export function createMemoryEventBus(): ThreadEventBus & { published: ThreadEvent[] } {
  const byThread = new Map<string, Set<(event: ThreadEvent) => void>>();
  const everything = new Set<(event: ThreadEvent) => void>();
  const published: ThreadEvent[] = [];
  return {
    published,
    publish(event) {
      published.push(event);
      // Copies: a listener that unsubscribes while it runs does not skip the next one.
      for (const listener of [...(byThread.get(event.threadId) ?? [])]) listener(event);
      for (const listener of [...everything]) listener(event);
    },
    subscribe(threadId, listener) {
      const listeners = byThread.get(threadId) ?? new Set();
      byThread.set(threadId, listeners);
      // A wrapper per subscription: the same function subscribed twice is called twice, like an EventEmitter.
      const subscription = (event: ThreadEvent) => listener(event);
      listeners.add(subscription);
      return () => {
        listeners.delete(subscription);
        if (listeners.size === 0) byThread.delete(threadId);
      };
    },
    subscribeAll(listener) {
      const subscription = (event: ThreadEvent) => listener(event);
      everything.add(subscription);
      return () => everything.delete(subscription);
    },
  };
}
