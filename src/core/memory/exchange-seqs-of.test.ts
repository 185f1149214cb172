import { describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../domain/types';
import { exchangeSeqsOf } from './exchange-seqs-of';
import { isSummaryWithdrawn } from '../domain/types';

function message(
  seq: number,
  role: TranscriptMessage['role'],
  extra: Partial<TranscriptMessage> = {},
): TranscriptMessage {
  const at = new Date(0);
  return {
    id: `m${seq}`,
    threadId: 't',
    seq,
    role,
    content: `text ${seq}`,
    toolCalls: null,
    toolCallId: null,
    status: 'complete',
    error: null,
    tokens: 5,
    clientMessageId: null,
    turnId: null,
    toolRunId: null,
    pinned: false,
    superseded: false,
    deleted: false,
    createdAt: at,
    updatedAt: at,
    completedAt: at,
    ...extra,
  };
}

const call = (id: string) => ({ id, name: 'search', args: {} });
const transcript = [
  message(1, 'user'),
  message(2, 'assistant', { content: '', toolCalls: [call('a'), call('b')] }),
  message(3, 'tool', { toolCallId: 'b' }),
  message(4, 'tool', { toolCallId: 'a' }),
  message(5, 'assistant'),
];
const store = {
  listMessagesBySeq: async ({ fromSeq, throughSeq }: { fromSeq: number; throughSeq: number }) =>
    transcript.filter((candidate) => (candidate.seq ?? 0) >= fromSeq && (candidate.seq ?? 0) <= throughSeq),
};

describe('exchangeSeqsOf', () => {
  it('is the message alone when it is not part of a tool exchange', async () => {
    expect(await exchangeSeqsOf(store, transcript[0] as TranscriptMessage)).toEqual([1]);
    expect(await exchangeSeqsOf(store, transcript[4] as TranscriptMessage)).toEqual([5]);
  });

  it('is the whole exchange for the call or any of its results, answered in any order', async () => {
    for (const index of [1, 2, 3])
      expect(await exchangeSeqsOf(store, transcript[index] as TranscriptMessage)).toEqual([2, 3, 4]);
  });
});

describe('isSummaryWithdrawn', () => {
  const summary = { text: '', tokens: 0, coveredThroughSeq: 10, revision: 3 };
  it('holds for a summary without text that still covers messages after the context start', () => {
    expect(isSummaryWithdrawn({ summary, contextStartSeq: 1 })).toBe(true);
  });
  it('does not hold after a fresh context, with a text, or before the first fold', () => {
    expect(isSummaryWithdrawn({ summary, contextStartSeq: 11 })).toBe(false);
    expect(isSummaryWithdrawn({ summary: { ...summary, text: 'Intent: x.' }, contextStartSeq: 1 })).toBe(false);
    expect(isSummaryWithdrawn({ summary: null, contextStartSeq: 1 })).toBe(false);
  });
});
