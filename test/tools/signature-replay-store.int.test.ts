import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createProducerConnection } from '../../src/jobs/redis-connections';
import { createSignatureReplayStore } from '../../src/jobs/signature-replay-store';

describe('createSignatureReplayStore on Redis', () => {
  const redis = createProducerConnection(inject('redisUrl'), { enableOfflineQueue: true });
  const prefix = `replay${randomBytes(5).toString('hex')}`;
  afterAll(() => redis.disconnect());

  it('accepts a signature once, in every process that shares the prefix, until it is forgotten', async () => {
    const store = createSignatureReplayStore({ redis, prefix, ttlMs: 60_000 });
    const otherProcess = createSignatureReplayStore({ redis, prefix, ttlMs: 60_000 });
    expect(await store.remember('v2=abc')).toBe(true);
    expect(await store.remember('v2=abc')).toBe(false);
    expect(await otherProcess.remember('v2=abc')).toBe(false);
    // Another deployment's prefix has its own signatures.
    expect(
      await createSignatureReplayStore({ redis, prefix: `${prefix}-other`, ttlMs: 60_000 }).remember('v2=abc'),
    ).toBe(true);
    await store.forget('v2=abc');
    expect(await otherProcess.remember('v2=abc')).toBe(true);
  });

  it('keeps a signature only for its time to live', async () => {
    const store = createSignatureReplayStore({ redis, prefix, ttlMs: 150 });
    expect(await store.remember('v2=short')).toBe(true);
    const ttl = await redis.pttl(`${prefix}:tool-signature:v2=short`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(150);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await store.remember('v2=short')).toBe(true);
  });
});
