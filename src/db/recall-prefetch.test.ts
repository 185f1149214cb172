import { describe, expect, it } from 'vitest';
import type { RecalledMessage } from '../core/context/types';
import { createRecallPrefetch, FRESH_MS, PREFETCH_IN_FLIGHT, PREFETCH_MAX } from './recall-prefetch';

const found: RecalledMessage[] = [
  {
    seq: 3,
    role: 'user',
    content: 'My passport number is C4R55T901.',
    createdAt: new Date(0),
    thread: { id: 'b', title: 'Papers' },
  },
];

/** Lets finished reads settle (a read counts as running until its promise chain has run). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

function clock() {
  let at = 1_000_000;
  return { now: () => at, advance: (ms: number) => (at += ms) };
}

describe('cross-thread recall read ahead of the turn', () => {
  it("stands for the turn's own read only for that message, once; a read that waited is marked to be checked again", async () => {
    const time = clock();
    const ahead = createRecallPrefetch(time.now);
    let reads = 0;
    const read = async () => {
      reads += 1;
      return found;
    };
    ahead.start('thread-a', read)({ messageId: 'm1', activeBefore: 0 });
    expect(reads).toBe(1);
    // Another message of the thread (a regeneration's, an older one's) never takes it, and the read is gone.
    await expect(ahead.take('thread-a', 'm0')).resolves.toBeUndefined();
    expect(ahead.take('thread-a', 'm1')).toBeUndefined();

    await settled();
    ahead.start('thread-a', read)({ messageId: 'm2', activeBefore: 0 });
    time.advance(FRESH_MS);
    await expect(ahead.take('thread-a', 'm2')).resolves.toEqual({ recalled: found, fresh: true });
    expect(ahead.take('thread-a', 'm2')).toBeUndefined();

    await settled();
    ahead.start('thread-a', read)({ messageId: 'm3', activeBefore: 0 });
    time.advance(FRESH_MS + 1);
    await expect(ahead.take('thread-a', 'm3')).resolves.toEqual({ recalled: found, fresh: false });
    expect(ahead.size).toBe(0);
  });

  it("waits for the accept's outcome when the turn starts first", async () => {
    const ahead = createRecallPrefetch(clock().now);
    const settle = ahead.start('thread-a', async () => found);
    const taken = ahead.take('thread-a', 'm1');
    expect(taken).toBeDefined();
    settle({ messageId: 'm1', activeBefore: 0 });
    await expect(taken).resolves.toEqual({ recalled: found, fresh: true });
  });

  it('is dropped when the message was not accepted or waits behind another turn of its thread', async () => {
    const ahead = createRecallPrefetch(clock().now);
    ahead.start('thread-a', async () => found)(null);
    expect(ahead.take('thread-a', 'm1')).toBeUndefined();
    await settled();
    ahead.start('thread-a', async () => found)({ messageId: 'm1', activeBefore: 1 });
    expect(ahead.take('thread-a', 'm1')).toBeUndefined();
    await settled();
    // Taken before the accept said so: resolves to nothing.
    const settle = ahead.start('thread-a', async () => found);
    const taken = ahead.take('thread-a', 'm1');
    settle({ messageId: 'm1', activeBefore: 2 });
    await expect(taken).resolves.toBeUndefined();
    expect(ahead.size).toBe(0);
  });

  it('a read that failed resolves to nothing (the turn reads for itself), never to a rejection', async () => {
    const ahead = createRecallPrefetch(clock().now);
    ahead.start('thread-a', () => Promise.reject(new Error('connection lost')))({ messageId: 'm1', activeBefore: 0 });
    await expect(ahead.take('thread-a', 'm1')).resolves.toBeUndefined();
  });

  it('keeps at most PREFETCH_MAX reads, the newest, however many turns never take theirs', async () => {
    const time = clock();
    const ahead = createRecallPrefetch(time.now);
    for (let index = 0; index < PREFETCH_MAX + 50; index += 1) {
      ahead.start(`thread-${index}`, async () => found)({ messageId: `m${index}`, activeBefore: 0 });
      await settled();
    }
    expect(ahead.size).toBe(PREFETCH_MAX);
    expect(ahead.take('thread-0', 'm0')).toBeUndefined();
    await expect(ahead.take(`thread-${PREFETCH_MAX + 49}`, `m${PREFETCH_MAX + 49}`)).resolves.toBeDefined();
    // A minute later, the ones never taken are gone at the next start.
    time.advance(60_001);
    ahead.start('thread-new', async () => found)({ messageId: 'mx', activeBefore: 0 });
    expect(ahead.size).toBe(1);
  });

  it('reads ahead for at most PREFETCH_IN_FLIGHT messages at once: past it, the turn reads for itself', async () => {
    const ahead = createRecallPrefetch(clock().now);
    const finish: (() => void)[] = [];
    const slowRead = () => new Promise<RecalledMessage[] | null>((resolve) => finish.push(() => resolve(found)));
    for (let index = 0; index < PREFETCH_IN_FLIGHT; index += 1)
      ahead.start(`busy-${index}`, slowRead)({ messageId: `b${index}`, activeBefore: 0 });
    expect(ahead.running).toBe(PREFETCH_IN_FLIGHT);
    let readPastTheBound = false;
    ahead.start('thread-a', async () => {
      readPastTheBound = true;
      return found;
    })({ messageId: 'm1', activeBefore: 0 });
    expect(readPastTheBound).toBe(false);
    expect(ahead.take('thread-a', 'm1')).toBeUndefined();

    finish.shift()?.();
    await expect(ahead.take('busy-0', 'b0')).resolves.toEqual({ recalled: found, fresh: true });
    expect(ahead.running).toBe(PREFETCH_IN_FLIGHT - 1);
    ahead.start('thread-a', async () => found)({ messageId: 'm2', activeBefore: 0 });
    await expect(ahead.take('thread-a', 'm2')).resolves.toEqual({ recalled: found, fresh: true });
  });
});
