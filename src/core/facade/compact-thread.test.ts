import { describe, expect, it } from 'vitest';
import type { Thread } from '../domain/types';
import { AppError } from '../errors/app-error';
import type { FoldOutcome } from '../summary/fold-thread';
import { compactThread, spendForCompaction } from './compact-thread';

const thread = {
  id: 'thread-1',
  lastSeq: 12,
  summary: { text: 'so far', tokens: 3, coveredThroughSeq: 8, revision: 2 },
} as Thread;

const threads = {
  findThread: async (id: string, userId: string) => (id === 'thread-1' && userId === 'u' ? thread : null),
};

describe('compactThread', () => {
  it('folds now (forced) and names the thread as it then stands, with the fold’s usage', async () => {
    const folded: FoldOutcome = {
      status: 'folded',
      revision: 2,
      foldedEntries: 4,
      throughSeq: 8,
      usage: { tokensIn: 120, tokensOut: 30 },
    };
    const seen: string[] = [];
    const compacted = await compactThread(
      { userId: 'u', threadId: 'thread-1' },
      {
        threads,
        timeoutMs: 1000,
        foldNow: async (threadId) => {
          seen.push(threadId);
          return folded;
        },
      },
    );
    expect(seen).toEqual(['thread-1']);
    expect(compacted).toMatchObject({ revision: 2, atSeq: 12, usage: { tokensIn: 120, tokensOut: 30 } });
  });

  it('answers PROVIDER_TIMEOUT when the fold does not finish in time (its signal aborted)', async () => {
    const run = compactThread(
      { userId: 'u', threadId: 'thread-1' },
      {
        threads,
        timeoutMs: 20,
        foldNow: (_threadId, signal) =>
          new Promise<FoldOutcome>((_resolve, reject) => {
            signal.addEventListener('abort', () => reject(new Error('aborted')));
          }),
      },
    );
    await expect(run).rejects.toMatchObject({ code: 'PROVIDER_TIMEOUT' });
  });

  it('a fold with nothing to fold leaves the summary as it is, and no usage', async () => {
    const compacted = await compactThread(
      { userId: 'u', threadId: 'thread-1' },
      { threads, timeoutMs: 1000, foldNow: async () => ({ status: 'skipped', reason: 'fits' }) },
    );
    expect(compacted).toMatchObject({ revision: 2, usage: { tokensIn: 0, tokensOut: 0 } });
  });
});

describe('spendForCompaction', () => {
  it('spends the send limit first and refuses when it is spent, before any hold', async () => {
    const holds: string[] = [];
    const spend = {
      hold: async () => {
        holds.push('hold');
        return 'hold-1';
      },
      releaseHold: async () => {
        holds.push('release');
      },
    } as never;
    const allowed = { hit: async () => ({ allowed: true as const }), check: async () => ({ allowed: true as const }) };
    const spent = await spendForCompaction('u', { sendLimiter: allowed, spend });
    await spent.release();
    expect(holds).toEqual(['hold', 'release']);
    const refused = {
      hit: async () => ({ allowed: false as const, retryAfterSeconds: 3 }),
      check: async () => ({ allowed: false as const, retryAfterSeconds: 3 }),
    };
    await expect(spendForCompaction('u', { sendLimiter: refused, spend })).rejects.toBeInstanceOf(AppError);
    expect(holds).toEqual(['hold', 'release']);
  });
});
