import { describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../domain/types';
import { AppError } from '../errors/app-error';
import { forkPointOf } from './fork-point';

function message(
  seq: number | null,
  role: TranscriptMessage['role'],
  extra: Partial<TranscriptMessage> = {},
): TranscriptMessage {
  return {
    id: `m${seq}`,
    threadId: 't',
    seq,
    role,
    content: `message ${seq}`,
    toolCalls: null,
    toolCallId: null,
    status: 'complete',
    error: null,
    tokens: 3,
    clientMessageId: null,
    turnId: null,
    toolRunId: null,
    pinned: false,
    superseded: false,
    deleted: false,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    completedAt: new Date(0),
    ...extra,
  };
}

/** user #1, assistant #2 calling two tools, their results #3 and #4, the answer #5. */
const transcript = [
  message(1, 'user'),
  message(2, 'assistant', {
    content: '',
    toolCalls: [
      { id: 'a', name: 'calculator', args: {} },
      { id: 'b', name: 'calculator', args: {} },
    ],
  }),
  message(3, 'tool', { toolCallId: 'a' }),
  message(4, 'tool', { toolCallId: 'b' }),
  message(5, 'assistant'),
];
const memoryOf = (messages: TranscriptMessage[]) => ({
  listMessagesBySeq: async ({ fromSeq, throughSeq }: { fromSeq: number; throughSeq: number }) =>
    messages.filter((candidate) => (candidate.seq ?? 0) >= fromSeq && (candidate.seq ?? 0) <= throughSeq),
});

describe('forkPointOf', () => {
  it('is the message itself outside a tool exchange', async () => {
    expect(await forkPointOf(transcript[0] as TranscriptMessage, memoryOf(transcript))).toBe(1);
    expect(await forkPointOf(transcript[4] as TranscriptMessage, memoryOf(transcript))).toBe(5);
  });

  it('snaps to the end of the exchange from its call or any of its results', async () => {
    for (const at of [transcript[1], transcript[2], transcript[3]])
      expect(await forkPointOf(at as TranscriptMessage, memoryOf(transcript))).toBe(4);
  });

  it('refuses an exchange whose results are not all in, a message still streaming, and one still waiting', async () => {
    const unfinished = [...transcript.slice(0, 3), message(4, 'tool', { toolCallId: 'b', status: 'streaming' })];
    await expect(forkPointOf(unfinished[1] as TranscriptMessage, memoryOf(unfinished))).rejects.toMatchObject({
      code: 'BUSY',
    });
    await expect(
      forkPointOf(message(6, 'assistant', { status: 'streaming' }), memoryOf(transcript)),
    ).rejects.toMatchObject({ code: 'BUSY' });
    const waiting = forkPointOf(message(null, 'user', { status: 'pending' }), memoryOf(transcript));
    await expect(waiting).rejects.toBeInstanceOf(AppError);
    await expect(waiting).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});
