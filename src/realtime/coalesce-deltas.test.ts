import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { applyMessageDelta } from '../shared/apply-message-delta';
import type { ThreadEvent } from '../shared/events';
import { createDeltaCoalescer } from './coalesce-deltas';

const delta = (offset: number, text: string, messageId = 'm1', threadId = 't1'): ThreadEvent => ({
  type: 'message-delta',
  threadId,
  messageId,
  offset,
  delta: text,
});
const end = (threadId = 't1'): ThreadEvent => ({ type: 'turn-end', threadId, turnId: 'u1', status: 'complete' });

describe('createDeltaCoalescer', () => {
  let emitted: ThreadEvent[];
  const coalescer = (windowMs = 50) =>
    createDeltaCoalescer({ windowMs, emit: (event) => emitted.push(event), now: () => Date.now() });

  beforeEach(() => {
    vi.useFakeTimers();
    emitted = [];
  });
  afterEach(() => vi.useRealTimers());

  it('sends the first delta at once and the next ones of the window as one frame with the same text at the same offsets', () => {
    const deltas = coalescer();
    deltas.push(delta(0, 'Hel'));
    expect(emitted).toEqual([delta(0, 'Hel')]);
    vi.advanceTimersByTime(20);
    deltas.push(delta(3, 'lo, '));
    vi.advanceTimersByTime(20);
    deltas.push(delta(7, 'world'));
    expect(emitted).toHaveLength(1);
    vi.advanceTimersByTime(10);
    expect(emitted).toEqual([delta(0, 'Hel'), delta(3, 'lo, world')]);
    let text = '';
    for (const event of emitted) text = applyMessageDelta(text, event as { offset: number; delta: string }) ?? 'gap';
    expect(text).toBe('Hello, world');
  });

  it('sends a delta at once when the thread sent none for a whole window', () => {
    const deltas = coalescer();
    deltas.push(delta(0, 'a'));
    vi.advanceTimersByTime(50);
    deltas.push(delta(1, 'b'));
    vi.advanceTimersByTime(80);
    deltas.push(delta(2, 'c'));
    expect(emitted).toEqual([delta(0, 'a'), delta(1, 'b'), delta(2, 'c')]);
  });

  it('sends the waiting deltas before any other event of the thread, and the next delta at once after it', () => {
    const deltas = coalescer();
    deltas.push(delta(0, 'a'));
    deltas.push(delta(1, 'b'));
    deltas.push(end());
    expect(emitted).toEqual([delta(0, 'a'), delta(1, 'b'), end()]);
    deltas.push(delta(0, 'x', 'm2'));
    expect(emitted.at(-1)).toEqual(delta(0, 'x', 'm2'));
    vi.advanceTimersByTime(100);
    expect(emitted).toHaveLength(4);
  });

  it('never joins text of another message or text that does not continue the waiting text', () => {
    const deltas = coalescer();
    deltas.push(delta(0, 'a'));
    deltas.push(delta(1, 'b'));
    deltas.push(delta(0, 'c', 'm2'));
    deltas.push(delta(1, 'd', 'm2'));
    deltas.push(delta(0, 'cd', 'm2'));
    vi.advanceTimersByTime(50);
    expect(emitted).toEqual([delta(0, 'a'), delta(1, 'b'), delta(0, 'cd', 'm2'), delta(0, 'cd', 'm2')]);
  });

  it('keeps threads apart and flushes one thread on request', () => {
    const deltas = coalescer();
    deltas.push(delta(0, 'a', 'm1', 't1'));
    deltas.push(delta(0, 'x', 'm9', 't2'));
    deltas.push(delta(1, 'b', 'm1', 't1'));
    deltas.push(delta(1, 'y', 'm9', 't2'));
    deltas.flush('t1');
    expect(emitted).toEqual([delta(0, 'a', 'm1', 't1'), delta(0, 'x', 'm9', 't2'), delta(1, 'b', 'm1', 't1')]);
    deltas.push(end('t1'));
    expect(emitted.at(-1)).toEqual(end('t1'));
    deltas.flushAll();
    expect(emitted.at(-1)).toEqual(delta(1, 'y', 'm9', 't2'));
    vi.advanceTimersByTime(100);
    expect(emitted).toHaveLength(5);
  });

  it('sends every delta as it comes with a window of 0', () => {
    const deltas = coalescer(0);
    for (const [offset, text] of [
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
    ] as const)
      deltas.push(delta(offset, text));
    expect(emitted).toEqual([delta(0, 'a'), delta(1, 'b'), delta(2, 'c')]);
  });
});
