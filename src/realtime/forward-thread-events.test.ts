import { describe, expect, it, vi } from 'vitest';
import { forwardThreadEvents } from './forward-thread-events';
import { createLocalEventBus } from './local-event-bus';

const log = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };

describe('forwardThreadEvents', () => {
  it("emits each event once to its thread's room, without its type", () => {
    const events = createLocalEventBus();
    const emitted: Array<[string, string, object]> = [];
    const stop = forwardThreadEvents({ events, log, emitter: { to: (room) => ({ emit: (event, payload) => emitted.push([room, event, payload]) }) } });
    events.publish({ type: 'message-delta', threadId: 't1', messageId: 'm1', offset: 0, delta: 'Hi' });
    events.publish({ type: 'turn-end', threadId: 't2', turnId: 'u1', status: 'complete' });
    stop();
    events.publish({ type: 'turn-end', threadId: 't2', turnId: 'u2', status: 'complete' });
    expect(emitted).toEqual([
      ['thread:t1', 'message-delta', { threadId: 't1', messageId: 'm1', offset: 0, delta: 'Hi' }],
      ['thread:t2', 'turn-end', { threadId: 't2', turnId: 'u1', status: 'complete' }],
    ]);
  });

  it('never lets a failing emit reach the publisher', () => {
    const events = createLocalEventBus();
    const perThread = vi.fn();
    events.subscribe('t1', perThread);
    forwardThreadEvents({ events, log, emitter: { to: () => ({ emit: () => { throw new Error('adapter down'); } }) } });
    expect(() => events.publish({ type: 'turn-end', threadId: 't1', turnId: 'u1', status: 'complete' })).not.toThrow();
    expect(perThread).toHaveBeenCalledOnce();
    expect(log.warn).toHaveBeenCalledOnce();
  });
});
