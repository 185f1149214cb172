import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Thread, TranscriptMessage, Turn } from '../../src/core/domain/types';
import type { SummaryCommit } from '../../src/core/ports';
import type { Stores } from '../fakes';

/** Builds the stores a contract case runs on: the Postgres repositories over one test database, or the fakes. */
export type MakeStores = () => Stores;

export const ENCODING = 'o200k_base';

/** A new user and a thread of theirs: every case works on its own rows, so cases share a database safely. */
export async function newThread(stores: Stores, options: { ownerId?: string; title?: string } = {}): Promise<Thread> {
  const ownerId = options.ownerId ?? `user-${randomUUID()}`;
  await stores.threads.ensureUser(ownerId, 'guest');
  return stores.threads.createThread({ ownerId, maxThreads: 100, ...(options.title ? { title: options.title } : {}) });
}

/** A user message accepted into the thread's queue (pending, no seq yet) with its turn. */
export async function send(
  stores: Stores,
  threadId: string,
  content: string,
  options: { clientMessageId?: string; maxQueued?: number; ownerId?: string } = {},
) {
  return stores.turns.acceptUserMessage({
    threadId,
    ownerId: options.ownerId ?? null,
    content,
    tokens: content.length,
    encoding: ENCODING,
    clientMessageId: options.clientMessageId ?? null,
    maxQueued: options.maxQueued ?? 5,
  });
}

/**
 * One whole exchange as the turn runner does it: the lease and the turn's start (the user message gets its seq), an
 * answer streamed then finished into the window, the turn's end with the next step (nothing queued: the lease released).
 * Returns the user message and the answer.
 */
export async function exchange(
  stores: Stores,
  threadId: string,
  content: string,
  answer = `answer to ${content}`,
): Promise<{ user: TranscriptMessage; answer: TranscriptMessage; turn: Turn }> {
  const owner = `process-${randomUUID()}`;
  await send(stores, threadId, content);
  const started = await stores.turns.nextTurn({ threadId, owner, ttlMs: 30_000 });
  if (started.outcome !== 'started' || !started.userMessage) throw new Error('no turn started');
  const streaming = await stores.turns.appendTurnMessage({
    threadId,
    turnId: started.turn.id,
    role: 'assistant',
    content: '',
    status: 'streaming',
  });
  const finished = await stores.turns.finishMessage({
    messageId: streaming.id,
    content: answer,
    status: 'complete',
    tokens: answer.length,
    encoding: ENCODING,
    entry: { role: 'assistant', content: answer, tokens: answer.length },
  });
  const { turn, next } = await stores.turns.completeTurn({ turnId: started.turn.id, threadId, owner, ttlMs: 30_000 });
  expect(next).toEqual({ outcome: 'idle' });
  return { user: started.userMessage, answer: finished, turn };
}

/** The error code of a rejected promise (an AppError's `code`). */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
  throw new Error('expected a rejection');
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sets the `created_at` of turns and messages, as a test's backdoor (Postgres: an UPDATE; the fake: its rows): two sends
 * accepted in the same millisecond share one, and a send whose transaction began first but took the thread's lock
 * second has the earlier one. The stores must order queued turns and pending messages by acceptance all the same.
 */
export type SetCreatedAt = (
  stores: Stores,
  rows: { turnIds: string[]; messageIds: string[] },
  createdAt: Date,
) => Promise<void>;

/** A fold's commit of #1–#throughSeq (each one folded) as revision `expectedVersion`'s successor: "Summary through #n.", 6 tokens. */
export function foldCommit(threadId: string, expectedVersion: number, throughSeq: number): SummaryCommit {
  const text = `Summary through #${throughSeq}.`;
  return {
    threadId,
    expectedVersion,
    author: 'fold',
    text,
    segmentEnds: [text.length],
    tokens: 6,
    encoding: ENCODING,
    fromSeq: 1,
    throughSeq,
    foldedSeqs: Array.from({ length: throughSeq }, (_, index) => index + 1),
    model: 'summarizer',
    tokensIn: 40,
    tokensOut: 6,
    durationMs: 10,
    identifiersKept: 0,
    identifiersTotal: 0,
  };
}
