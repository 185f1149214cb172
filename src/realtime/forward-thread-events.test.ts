import { describe, expect, it, vi } from 'vitest';
import { forwardThreadEvents } from './forward-thread-events';
import { createLocalEventBus } from './local-event-bus';

const log = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };

describe('forwardThreadEvents', () => {
  it("emits each event once to its thread's room, without its type", () => {
    const events = createLocalEventBus();
    const emitted: Array<[string, string, object]> = [];
    const forwarding = forwardThreadEvents({
      events,
      log,
      emitter: { to: (room) => ({ emit: (event, payload) => emitted.push([room, event, payload]) }) },
    });
    events.publish({ type: 'message-delta', threadId: 't1', messageId: 'm1', offset: 0, delta: 'Hi' });
    events.publish({ type: 'turn-end', threadId: 't2', turnId: 'u1', status: 'complete' });
    forwarding.stop();
    events.publish({ type: 'turn-end', threadId: 't2', turnId: 'u2', status: 'complete' });
    expect(emitted).toEqual([
      ['thread:t1', 'message-delta', { threadId: 't1', messageId: 'm1', offset: 0, delta: 'Hi' }],
      ['thread:t2', 'turn-end', { threadId: 't2', turnId: 'u1', status: 'complete' }],
    ]);
  });

  it('coalesces the deltas of a stream into fewer emits, sends them before the next event, and sends what waits on stop', () => {
    const events = createLocalEventBus();
    const emitted: Array<[string, object]> = [];
    const forwarding = forwardThreadEvents({
      events,
      log,
      coalesceMs: 60_000,
      emitter: { to: () => ({ emit: (event, payload) => emitted.push([event, payload]) }) },
    });
    const words = ['one ', 'two ', 'three ', 'four'];
    let offset = 0;
    for (const word of words) {
      events.publish({ type: 'message-delta', threadId: 't1', messageId: 'm1', offset, delta: word });
      offset += word.length;
    }
    events.publish({ type: 'turn-end', threadId: 't1', turnId: 'u1', status: 'complete' });
    events.publish({ type: 'message-delta', threadId: 't1', messageId: 'm2', offset: 0, delta: 'next ' });
    events.publish({ type: 'message-delta', threadId: 't1', messageId: 'm2', offset: 5, delta: 'answer' });
    forwarding.stop();
    expect(emitted).toEqual([
      ['message-delta', { threadId: 't1', messageId: 'm1', offset: 0, delta: 'one ' }],
      ['message-delta', { threadId: 't1', messageId: 'm1', offset: 4, delta: 'two three four' }],
      ['turn-end', { threadId: 't1', turnId: 'u1', status: 'complete' }],
      ['message-delta', { threadId: 't1', messageId: 'm2', offset: 0, delta: 'next ' }],
      ['message-delta', { threadId: 't1', messageId: 'm2', offset: 5, delta: 'answer' }],
    ]);
  });

  it('never lets a failing emit reach the publisher', () => {
    const events = createLocalEventBus();
    const perThread = vi.fn();
    events.subscribe('t1', perThread);
    forwardThreadEvents({
      events,
      log,
      emitter: {
        to: () => ({
          emit: () => {
            throw new Error('adapter down');
          },
        }),
      },
    });
    expect(() => events.publish({ type: 'turn-end', threadId: 't1', turnId: 'u1', status: 'complete' })).not.toThrow();
    expect(perThread).toHaveBeenCalledOnce();
    expect(log.warn).toHaveBeenCalledOnce();
  });
});
