import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ThreadEventBus } from '../../src/core/ports';
import type { ThreadEvent } from '../../src/shared/events';

const reset = (threadId: string, seq: number): ThreadEvent => ({ type: 'context-reset', threadId, seq });

/** The ThreadEventBus contract (what the turn, the fold and the tools publish reaches sockets and SSE responses). */
export function describeEventBusContract(name: string, make: () => ThreadEventBus): void {
  describe(`ThreadEventBus contract: ${name}`, () => {
    it("delivers a thread's events to its subscribers only, in order, synchronously", () => {
      const bus = make();
      const [a, b] = [randomUUID(), randomUUID()];
      const ofA: ThreadEvent[] = [];
      const ofB: ThreadEvent[] = [];
      bus.subscribe(a, (event) => ofA.push(event));
      bus.subscribe(b, (event) => ofB.push(event));
      bus.publish(reset(a, 1));
      bus.publish(reset(b, 1));
      bus.publish(reset(a, 2));
      // Delivered before publish returns: the turn's order of events is the order subscribers see.
      expect(ofA).toEqual([reset(a, 1), reset(a, 2)]);
      expect(ofB).toEqual([reset(b, 1)]);
    });

    it("delivers every thread's events to subscribeAll, after the thread's own subscribers", () => {
      const bus = make();
      const [a, b] = [randomUUID(), randomUUID()];
      const seen: string[] = [];
      bus.subscribeAll((event) => seen.push(`all:${event.threadId === a ? 'a' : 'b'}`));
      bus.subscribe(a, () => seen.push('a'));
      bus.publish(reset(a, 1));
      bus.publish(reset(b, 1));
      expect(seen).toEqual(['a', 'all:a', 'all:b']);
    });

    it('stops delivering after unsubscribe; each subscription is its own (the same listener twice is called twice)', () => {
      const bus = make();
      const threadId = randomUUID();
      const calls: number[] = [];
      const listener = (event: ThreadEvent) => calls.push(event.type === 'context-reset' ? event.seq : -1);
      const first = bus.subscribe(threadId, listener);
      const second = bus.subscribe(threadId, listener);
      const all = bus.subscribeAll(listener);
      bus.publish(reset(threadId, 1));
      first();
      all();
      bus.publish(reset(threadId, 2));
      second();
      bus.publish(reset(threadId, 3));
      expect(calls).toEqual([1, 1, 1, 2]);
    });

    it('lets a listener unsubscribe while an event is delivered without the others missing it', () => {
      const bus = make();
      const threadId = randomUUID();
      const seen: string[] = [];
      const stop = bus.subscribe(threadId, () => {
        seen.push('once');
        stop();
      });
      bus.subscribe(threadId, () => seen.push('always'));
      bus.publish(reset(threadId, 1));
      bus.publish(reset(threadId, 2));
      expect(seen).toEqual(['once', 'always', 'always']);
    });
  });
}
