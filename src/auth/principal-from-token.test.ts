import { describe, expect, it } from 'vitest';
import type { ErasureRecord } from '../core/ports';
import type { ThreadStore } from '../core/ports';
import { createTokenService } from './token-service';
import { KnownUsers, principalFromToken } from './principal-from-token';

const tokens = createTokenService('authenticate-test-secret-0123456789abcdef');

/** A users table that counts its upserts, and a tombstone table the test writes. */
function world() {
  const upserts: string[] = [];
  const tombstones = new Map<string, ErasureRecord>();
  const deps = {
    tokens,
    threads: {
      ensureUser: async (userId: string) => {
        upserts.push(userId);
      },
    } as unknown as ThreadStore,
    erasures: { erasureOf: async (userId: string) => tombstones.get(userId) ?? null },
  };
  return { upserts, tombstones, deps };
}

describe('principalFromToken and erased users', () => {
  it("stores a user's row on their first request only; after an erasure a newer token stores it once again", async () => {
    const { upserts, tombstones, deps } = world();
    const userId = `host-${crypto.randomUUID()}`;
    const token = await tokens.sign({ userId, kind: 'external' });
    await principalFromToken(token, deps);
    await principalFromToken(token, deps);
    expect(upserts).toEqual([userId]);

    // Erased (by another process) after the token was issued: the token is refused, nothing is stored.
    tombstones.set(userId, { erasedAt: new Date(Date.now() + 5000), kind: 'external' });
    await expect(principalFromToken(token, deps)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(upserts).toEqual([userId]);

    // Erased before the token: the user comes back, stored once, then known again.
    tombstones.set(userId, { erasedAt: new Date(Date.now() - 5000), kind: 'external' });
    await principalFromToken(token, deps);
    await principalFromToken(token, deps);
    await principalFromToken(token, deps);
    expect(upserts).toEqual([userId, userId]);

    // A second erasure (a newer tombstone) has the row stored again, once.
    tombstones.set(userId, { erasedAt: new Date(Date.now() - 2000), kind: 'external' });
    await principalFromToken(token, deps);
    await principalFromToken(token, deps);
    expect(upserts).toEqual([userId, userId, userId]);
  });

  it('never stores an erased guest again, whatever the token', async () => {
    const { upserts, tombstones, deps } = world();
    const userId = `guest-${crypto.randomUUID()}`;
    tombstones.set(userId, { erasedAt: new Date(Date.now() - 60_000), kind: 'guest' });
    await expect(principalFromToken(await tokens.sign({ userId, kind: 'guest' }), deps)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    await expect(principalFromToken(await tokens.sign({ userId, kind: 'external' }), deps)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    expect(upserts).toEqual([]);
  });
});

describe('KnownUsers', () => {
  it('asks for a row when unknown, or when the tombstone is newer than the one it was stored after; forgets on demand and past its capacity', () => {
    const known = new KnownUsers(2);
    const first = { erasedAt: new Date('2026-01-01T00:00:00Z') };
    expect(known.needsRow('a', null)).toBe(true);
    known.remember('a', null);
    expect(known.needsRow('a', null)).toBe(false);
    expect(known.needsRow('a', first)).toBe(true);
    known.remember('a', first);
    expect(known.needsRow('a', { erasedAt: new Date(first.erasedAt) })).toBe(false);
    expect(known.needsRow('a', { erasedAt: new Date('2026-02-01T00:00:00Z') })).toBe(true);
    known.forget('a');
    expect(known.needsRow('a', null)).toBe(true);
    known.remember('a', null);
    known.remember('b', null);
    known.remember('c', null);
    expect(known.needsRow('a', null)).toBe(true);
    expect(known.needsRow('c', null)).toBe(false);
  });
});
