import { describe, expect, it } from 'vitest';
import type { ErasureStore } from '../ports';
import { eraseUser, refusedAfterErasure } from './erase-user';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('erasure', () => {
  const erasedAt = new Date('2026-05-01T10:00:00.500Z');

  it("refuses a token issued before the erasure, a guest always, and accepts a host user's newer token", () => {
    expect(refusedAfterErasure(null, { issuedAtMs: 0, kind: 'guest' })).toBe(false);
    expect(
      refusedAfterErasure({ erasedAt, kind: 'external' }, { issuedAtMs: erasedAt.getTime() - 1000, kind: 'external' }),
    ).toBe(true);
    // iat has seconds: a token of the same second as the erasure is refused.
    expect(
      refusedAfterErasure(
        { erasedAt, kind: 'external' },
        { issuedAtMs: Math.floor(erasedAt.getTime() / 1000) * 1000, kind: 'external' },
      ),
    ).toBe(true);
    expect(
      refusedAfterErasure({ erasedAt, kind: 'external' }, { issuedAtMs: erasedAt.getTime() + 1000, kind: 'external' }),
    ).toBe(false);
    expect(
      refusedAfterErasure({ erasedAt, kind: 'guest' }, { issuedAtMs: erasedAt.getTime() + 60_000, kind: 'guest' }),
    ).toBe(true);
    expect(
      refusedAfterErasure({ erasedAt, kind: 'guest' }, { issuedAtMs: erasedAt.getTime() + 60_000, kind: 'external' }),
    ).toBe(true);
  });

  it("stops the user's turns, erases, then disconnects, forgets their Redis state and removes their jobs; failing Redis or remote steps do not fail it", async () => {
    const calls: string[] = [];
    const store: ErasureStore = {
      erasureOf: async () => null,
      threadIdsOf: async () => ['a', 'b'],
      toolRunIdsOf: async () => ['run-1'],
      toolRunIdsOfThread: async () => [],
      erase: async () => {
        calls.push('erase');
        return { existed: true, threads: 2 };
      },
    };
    const outcome = await eraseUser(
      { userId: 'u', kind: 'guest' },
      {
        store,
        log: silent,
        cancelTurns: (threadId) => calls.push(`cancel ${threadId}`),
        cancelRemoteWork: async (runIds) => {
          calls.push(`remote ${runIds.join(',')}`);
          throw new Error('runner down');
        },
        disconnect: async () => {
          calls.push('disconnect');
          throw new Error('redis down');
        },
        forgetEphemeral: async () => {
          calls.push('forget');
        },
        removeJobs: async (refs) => {
          calls.push(`jobs ${refs.threadIds.join(',')} ${refs.runIds.join(',')}`);
          throw new Error('redis down');
        },
      },
    );
    expect(outcome).toEqual({ existed: true, threads: 2 });
    // The jobs go after the rows: a turn stopping meanwhile may still schedule one.
    expect(calls).toEqual(['cancel a', 'cancel b', 'remote run-1', 'erase', 'jobs a,b run-1', 'disconnect', 'forget']);
  });
});
