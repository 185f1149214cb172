import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../src/core/domain/types';
import type { NextTurn } from '../../src/core/ports';
import type { Stores } from '../fakes';
import {
  ENCODING,
  codeOf,
  exchange,
  newThread,
  pause,
  send,
  type MakeStores,
  type SetCreatedAt,
} from './store-fixtures';

/** The started turn of a nextTurn, or a failed expectation. */
function startedOf(next: NextTurn): NextTurn & { outcome: 'started' } {
  expect(next.outcome).toBe('started');
  return next as NextTurn & { outcome: 'started' };
}

/** The error the sweeper ends cut turns with (its text is the sweeper's; the store stores what it is given). */
const CUT = { code: 'INTERRUPTED' as const, message: 'cut off by a restart' };

/**
 * A process that starts the thread's next turn and dies: its lease (1 ms) expires at once. With `round`, it finished
 * one answer into the window first; with `partial`, it was streaming that text.
 */
async function interrupt(stores: Stores, threadId: string, written: { round?: string; partial?: string } = {}) {
  const started = startedOf(await stores.turns.nextTurn({ threadId, owner: `dying-${randomUUID()}`, ttlMs: 1 }));
  if (written.round) await answerTurn(stores, threadId, started.turn.id, written.round);
  const partial = written.partial
    ? await stores.turns.appendTurnMessage({
        threadId,
        turnId: started.turn.id,
        role: 'assistant',
        content: written.partial,
        status: 'streaming',
      })
    : null;
  await pause(20);
  return { started, partial: partial as TranscriptMessage };
}

/** A complete assistant answer of the turn, in the window. */
async function answerTurn(stores: Stores, threadId: string, turnId: string, text: string) {
  const streaming = await stores.turns.appendTurnMessage({
    threadId,
    turnId,
    role: 'assistant',
    content: '',
    status: 'streaming',
  });
  return stores.turns.finishMessage({
    messageId: streaming.id,
    content: text,
    status: 'complete',
    tokens: text.length,
    encoding: ENCODING,
    entry: { role: 'assistant', content: text, tokens: text.length },
  });
}

/**
 * The TurnStore contract: what the turn runner, the sweeper and the send routes rely on. Both the Postgres
 * repository (test/contracts/stores.int.test.ts) and the in-memory fake (stores.unit.test.ts) must pass it.
 */
export function describeTurnStoreContract(name: string, make: MakeStores, setCreatedAt: SetCreatedAt): void {
  describe(`TurnStore contract: ${name}`, () => {
    it('accepts a user message as pending, without a seq, with a queued turn; the transcript lists it last', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'first');
      const accepted = await send(stores, thread.id, 'waiting');
      expect(accepted.duplicate).toBe(false);
      expect(accepted.message).toMatchObject({
        threadId: thread.id,
        role: 'user',
        content: 'waiting',
        status: 'pending',
        seq: null,
        turnId: accepted.turn.id,
      });
      expect(accepted.turn).toMatchObject({
        threadId: thread.id,
        kind: 'message',
        userMessageId: accepted.message.id,
        status: 'queued',
        startedAt: null,
      });
      expect(await stores.turns.findTurn(accepted.turn.id)).toEqual(accepted.turn);
      expect(await stores.turns.hasQueuedTurns(thread.id)).toBe(true);
      const page = await stores.transcript.listMessages({ threadId: thread.id, limit: 50 });
      expect(page.messages.map((message) => [message.seq, message.content])).toEqual([
        [1, 'first'],
        [2, 'answer to first'],
        [null, 'waiting'],
      ]);
    });

    it('is idempotent by clientMessageId within a thread: a resend returns the stored message and turn, stores nothing', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const first = await send(stores, thread.id, 'hello', { clientMessageId: 'client-1' });
      const again = await send(stores, thread.id, 'hello (resent)', { clientMessageId: 'client-1' });
      expect(again.duplicate).toBe(true);
      expect(again.message.id).toBe(first.message.id);
      expect(again.message.content).toBe('hello');
      expect(again.turn.id).toBe(first.turn.id);
      expect(await stores.threads.countMessages(thread.id)).toBe(1);
      // The id is scoped to its thread.
      const other = await newThread(stores);
      expect((await send(stores, other.id, 'hello', { clientMessageId: 'client-1' })).duplicate).toBe(false);
    });

    it('stores one message and turn for concurrent sends with the same clientMessageId (a client retrying at once)', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const sends = await Promise.all(
        Array.from({ length: 4 }, (_, index) => send(stores, thread.id, `hello ${index}`, { clientMessageId: 'twin' })),
      );
      expect(sends.filter((accepted) => !accepted.duplicate)).toHaveLength(1);
      expect(new Set(sends.map((accepted) => accepted.message.id)).size).toBe(1);
      expect(new Set(sends.map((accepted) => accepted.turn.id)).size).toBe(1);
      expect(await stores.threads.countMessages(thread.id)).toBe(1);
      expect(await stores.turns.hasQueuedTurns(thread.id)).toBe(true);
    });

    it('refuses with BUSY past maxQueued turns besides the running one and stores nothing; a resend still answers', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await send(stores, thread.id, 'one', { maxQueued: 1, clientMessageId: 'one' });
      await send(stores, thread.id, 'two', { maxQueued: 1 });
      expect(await codeOf(send(stores, thread.id, 'three', { maxQueued: 1 }))).toBe('BUSY');
      expect(await stores.threads.countMessages(thread.id)).toBe(2);
      expect((await send(stores, thread.id, 'one', { maxQueued: 1, clientMessageId: 'one' })).duplicate).toBe(true);
    });

    it('queues a retry: CONFLICT while the same user message is being answered, BUSY past maxQueued', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const { user } = await exchange(stores, thread.id, 'question');
      const retry = await stores.turns.queueTurn({
        threadId: thread.id,
        kind: 'retry',
        userMessageId: user.id,
        maxQueued: 5,
      });
      expect(retry).toMatchObject({ threadId: thread.id, kind: 'retry', userMessageId: user.id, status: 'queued' });
      expect(
        await codeOf(
          stores.turns.queueTurn({ threadId: thread.id, kind: 'retry', userMessageId: user.id, maxQueued: 5 }),
        ),
      ).toBe('CONFLICT');
      await send(stores, thread.id, 'next');
      const busy = await exchange(stores, (await newThread(stores)).id, 'elsewhere');
      expect(
        await codeOf(
          stores.turns.queueTurn({ threadId: thread.id, kind: 'retry', userMessageId: busy.user.id, maxQueued: 1 }),
        ),
      ).toBe('BUSY');
    });

    it('says whether a turn of the thread is running, that turn when named: a queued or ended one is not', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const other = await newThread(stores);
      const accepted = await send(stores, thread.id, 'first');
      const elsewhere = await send(stores, other.id, 'elsewhere');
      // Another thread's running turn is not this thread's, nor is a queued one.
      startedOf(await stores.turns.nextTurn({ threadId: other.id, owner: 'p', ttlMs: 30_000 }));
      expect(await stores.turns.hasRunningTurn(thread.id)).toBe(false);
      expect(await stores.turns.hasRunningTurn(thread.id, elsewhere.turn.id)).toBe(false);
      startedOf(await stores.turns.nextTurn({ threadId: thread.id, owner: 'p', ttlMs: 30_000 }));
      expect(await stores.turns.hasRunningTurn(thread.id)).toBe(true);
      expect(await stores.turns.hasRunningTurn(thread.id, accepted.turn.id)).toBe(true);
      expect(await stores.turns.hasRunningTurn(thread.id, randomUUID())).toBe(false);
      await stores.turns.finishTurn({ turnId: accepted.turn.id, status: 'cancelled' });
      expect(await stores.turns.hasRunningTurn(thread.id)).toBe(false);
      expect(await stores.turns.hasRunningTurn(thread.id, accepted.turn.id)).toBe(false);
    });

    it('takes the lease with compare-and-set: one owner at a time, renewable, released only by its owner, free once expired', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const lease = (owner: string, ttlMs = 30_000) => stores.turns.acquireLease({ threadId: thread.id, owner, ttlMs });
      expect(await lease('a')).toBe(true);
      expect(await lease('b')).toBe(false);
      expect(await lease('a')).toBe(true);
      await stores.turns.releaseLease({ threadId: thread.id, owner: 'b' });
      expect(await lease('b')).toBe(false);
      await stores.turns.releaseLease({ threadId: thread.id, owner: 'a' });
      expect(await lease('b', 1)).toBe(true);
      await pause(50);
      expect(await lease('c')).toBe(true);
      expect(await stores.turns.acquireLease({ threadId: randomUUID(), owner: 'a', ttlMs: 1000 })).toBe(false);
    });

    it('says on release whether turns are queued: a send that arrived under the lease is not left to the sweeper', async () => {
      const stores = make();
      const thread = await newThread(stores);
      expect(await stores.turns.acquireLease({ threadId: thread.id, owner: 'a', ttlMs: 30_000 })).toBe(true);
      expect(await stores.turns.releaseLease({ threadId: thread.id, owner: 'a' })).toBe(false);
      expect(await stores.turns.acquireLease({ threadId: thread.id, owner: 'a', ttlMs: 30_000 })).toBe(true);
      await send(stores, thread.id, 'arrived while the lease was held');
      expect(await stores.turns.acquireLease({ threadId: thread.id, owner: 'b', ttlMs: 30_000 })).toBe(false);
      expect(await stores.turns.releaseLease({ threadId: thread.id, owner: 'a' })).toBe(true);
      expect(await stores.turns.acquireLease({ threadId: thread.id, owner: 'b', ttlMs: 30_000 })).toBe(true);
    });

    it('starts turns oldest first, only under the lease; the pending message gets the next seq and joins the window', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const first = await send(stores, thread.id, 'first');
      const second = await send(stores, thread.id, 'second');
      // Accepted in the same millisecond: the timestamp cannot tell them apart, the acceptance order does.
      await setCreatedAt(
        stores,
        { turnIds: [first.turn.id, second.turn.id], messageIds: [first.message.id, second.message.id] },
        new Date(),
      );
      const next = (owner: string) => stores.turns.nextTurn({ threadId: thread.id, owner, ttlMs: 30_000 });
      expect(await stores.turns.acquireLease({ threadId: thread.id, owner: 'other', ttlMs: 30_000 })).toBe(true);
      expect(await next('p')).toEqual({ outcome: 'leased-elsewhere' });
      expect((await stores.turns.findTurn(first.turn.id))?.status).toBe('queued');
      await stores.turns.releaseLease({ threadId: thread.id, owner: 'other' });

      const started = startedOf(await next('p'));
      expect(started.turn).toMatchObject({ id: first.turn.id, status: 'running' });
      expect(started.turn.startedAt).toBeInstanceOf(Date);
      expect(started.userMessage).toMatchObject({ id: first.message.id, seq: 1, status: 'complete' });
      expect(started.context.thread.lastSeq).toBe(1);
      expect(started.context.window).toEqual([
        { seq: 1, role: 'user', content: 'first', tokens: 5, tokenEncoding: ENCODING },
      ]);
      // The lease is p's now.
      expect(await stores.turns.acquireLease({ threadId: thread.id, owner: 'other', ttlMs: 30_000 })).toBe(false);
      // An answer appended meanwhile takes seq 2: the second message gets 3 when its turn starts, not when it was sent.
      const answer = await stores.turns.appendTurnMessage({
        threadId: thread.id,
        turnId: first.turn.id,
        role: 'assistant',
        content: '',
        status: 'streaming',
      });
      expect(answer.seq).toBe(2);
      await stores.turns.finishTurn({ turnId: first.turn.id, status: 'complete' });
      const again = startedOf(await next('p'));
      expect(again.turn.id).toBe(second.turn.id);
      expect(again.userMessage).toMatchObject({ id: second.message.id, seq: 3 });
      expect(again.context.window.map((entry) => entry.seq)).toEqual([1, 3]);
      expect(await stores.turns.hasQueuedTurns(thread.id)).toBe(false);
      await stores.turns.finishTurn({ turnId: second.turn.id, status: 'complete' });
      // Nothing queued: the step releases the lease, so another process' runner takes the next send at once.
      expect(await next('p')).toEqual({ outcome: 'idle' });
      expect(await stores.turns.acquireLease({ threadId: thread.id, owner: 'other', ttlMs: 30_000 })).toBe(true);
      expect(await stores.turns.nextTurn({ threadId: randomUUID(), owner: 'p', ttlMs: 30_000 })).toEqual({
        outcome: 'leased-elsewhere',
      });
    });

    it('completes a turn with the step to the next: the next turn started under the lease, the context as the turn left it', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await send(stores, thread.id, 'question');
      const started = startedOf(await stores.turns.nextTurn({ threadId: thread.id, owner: 'p', ttlMs: 30_000 }));
      const waiting = await send(stores, thread.id, 'sent during the answer');
      const streaming = await stores.turns.appendTurnMessage({
        threadId: thread.id,
        turnId: started.turn.id,
        role: 'assistant',
        content: '',
        status: 'streaming',
      });
      await stores.turns.finishMessage({
        messageId: streaming.id,
        content: 'the answer',
        status: 'complete',
        tokens: 10,
        encoding: ENCODING,
        entry: { role: 'assistant', content: 'the answer', tokens: 10 },
      });
      const completed = await stores.turns.completeTurn({
        turnId: started.turn.id,
        threadId: thread.id,
        owner: 'p',
        ttlMs: 30_000,
      });
      expect(completed.turn).toMatchObject({ id: started.turn.id, status: 'complete', error: null });
      expect(completed.turn.finishedAt).toBeInstanceOf(Date);
      expect(await stores.turns.findTurn(started.turn.id)).toEqual(completed.turn);
      // The context as this turn left it (the fold decision's), without the next turn's message...
      expect(completed.context?.window.map((entry) => [entry.seq, entry.role, entry.content, entry.tokens])).toEqual([
        [1, 'user', 'question', 8],
        [2, 'assistant', 'the answer', 10],
      ]);
      expect(completed.context?.thread).toMatchObject({ id: thread.id, lastSeq: 2 });
      // ...and the next turn started in the same step, its message at the next seq, its context with it.
      const next = startedOf(completed.next);
      expect(next.turn).toMatchObject({ id: waiting.turn.id, status: 'running' });
      expect(next.userMessage).toMatchObject({ id: waiting.message.id, seq: 3 });
      expect(next.context.window.map((entry) => entry.seq)).toEqual([1, 2, 3]);
      expect(await stores.turns.acquireLease({ threadId: thread.id, owner: 'other', ttlMs: 30_000 })).toBe(false);

      // A closing process starts nothing: the queued turn stays queued and the lease is free for another process.
      const last = await send(stores, thread.id, 'left for another process');
      const closing = await stores.turns.completeTurn({
        turnId: next.turn.id,
        threadId: thread.id,
        owner: 'p',
        ttlMs: 30_000,
        startNext: false,
      });
      expect(closing.next).toEqual({ outcome: 'idle' });
      expect((await stores.turns.findTurn(last.turn.id))?.status).toBe('queued');
      expect(await stores.turns.acquireLease({ threadId: thread.id, owner: 'other', ttlMs: 30_000 })).toBe(true);
      expect(
        await codeOf(
          stores.turns.completeTurn({ turnId: randomUUID(), threadId: thread.id, owner: 'p', ttlMs: 30_000 }),
        ),
      ).toBe('NOT_FOUND');
    });

    it("accepts only on the owner's thread: another user's or an unknown thread is NOT_FOUND, stores nothing, finds no resend", async () => {
      const stores = make();
      const thread = await newThread(stores);
      const owner = thread.ownerId;
      const mine = await send(stores, thread.id, 'mine', { ownerId: owner, clientMessageId: 'c-1' });
      expect(mine.duplicate).toBe(false);
      expect(await codeOf(send(stores, thread.id, 'not yours', { ownerId: 'someone-else' }))).toBe('NOT_FOUND');
      // A resend's id is no way into another user's thread either.
      expect(await codeOf(send(stores, thread.id, 'mine', { ownerId: 'someone-else', clientMessageId: 'c-1' }))).toBe(
        'NOT_FOUND',
      );
      expect(await codeOf(send(stores, randomUUID(), 'nowhere', { ownerId: owner }))).toBe('NOT_FOUND');
      expect(await codeOf(send(stores, 'not-a-uuid', 'nowhere', { ownerId: owner }))).toBe('NOT_FOUND');
      expect(await stores.threads.countMessages(thread.id)).toBe(1);
      expect((await send(stores, thread.id, 'mine', { ownerId: owner, clientMessageId: 'c-1' })).message.id).toBe(
        mine.message.id,
      );
    });

    it('finishes a message: the answer joins the window with its entry, a failed one stays out, streaming text stops changing', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const { user, answer, turn } = await exchange(stores, thread.id, 'question', 'the answer');
      expect(answer).toMatchObject({
        seq: 2,
        role: 'assistant',
        content: 'the answer',
        status: 'complete',
        turnId: turn.id,
        tokens: 10,
      });
      expect(answer.completedAt).toBeInstanceOf(Date);
      expect(turn).toMatchObject({ status: 'complete' });
      await stores.turns.saveStreamingText(answer.id, 'changed after the end');
      expect((await stores.transcript.findMessage(thread.id, answer.id))?.content).toBe('the answer');

      await send(stores, thread.id, 'again');
      const started = startedOf(await stores.turns.nextTurn({ threadId: thread.id, owner: 'p', ttlMs: 30_000 }));
      const failed = await stores.turns.appendTurnMessage({
        threadId: thread.id,
        turnId: started.turn.id,
        role: 'assistant',
        content: '',
        status: 'streaming',
      });
      await stores.turns.saveStreamingText(failed.id, 'Half an');
      expect((await stores.transcript.findMessage(thread.id, failed.id))?.content).toBe('Half an');
      const error = { code: 'PROVIDER_ERROR', message: 'the provider failed' };
      const ended = await stores.turns.finishMessage({
        messageId: failed.id,
        content: 'Half an',
        status: 'error',
        error,
        tokens: 2,
        encoding: ENCODING,
      });
      expect(ended).toMatchObject({ status: 'error', error, content: 'Half an' });
      expect(await stores.turns.finishTurn({ turnId: started.turn.id, status: 'error', error })).toMatchObject({
        status: 'error',
        error,
      });
      const context = await stores.turns.loadContext(thread.id);
      expect(context?.window.map((entry) => [entry.seq, entry.role, entry.content])).toEqual([
        [1, 'user', 'question'],
        [2, 'assistant', 'the answer'],
        [3, 'user', 'again'],
      ]);
      expect((await stores.transcript.listTurnMessages(turn.id)).map((message) => message.id)).toEqual([answer.id]);
      expect(user.seq).toBe(1);
    });

    it('starts queued turns in the order they were accepted, whatever their created_at says', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const sent = [
        await send(stores, thread.id, 'one'),
        await send(stores, thread.id, 'two'),
        await send(stores, thread.id, 'three'),
      ];
      // One and two share a millisecond; three's transaction began first but took the thread's lock last.
      const at = Date.now();
      const rowsOf = (picked: typeof sent) => ({
        turnIds: picked.map((accepted) => accepted.turn.id),
        messageIds: picked.map((accepted) => accepted.message.id),
      });
      await setCreatedAt(stores, rowsOf(sent.slice(0, 2)), new Date(at));
      await setCreatedAt(stores, rowsOf(sent.slice(2)), new Date(at - 1000));
      const startedContents: string[] = [];
      for (let index = 0; index < sent.length; index += 1) {
        const started = startedOf(await stores.turns.nextTurn({ threadId: thread.id, owner: 'p', ttlMs: 30_000 }));
        startedContents.push(started.userMessage?.content ?? '');
        await stores.turns.finishTurn({ turnId: started.turn.id, status: 'complete' });
      }
      expect(startedContents).toEqual(['one', 'two', 'three']);
      const page = await stores.transcript.listMessages({ threadId: thread.id, limit: 50 });
      expect(page.messages.map((message) => [message.seq, message.content])).toEqual([
        [1, 'one'],
        [2, 'two'],
        [3, 'three'],
      ]);
    });

    it('regenerate: starting it supersedes the answers after its user message and drops them from the window', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const { user, answer } = await exchange(stores, thread.id, 'question');
      await stores.turns.queueTurn({ threadId: thread.id, kind: 'regenerate', userMessageId: user.id, maxQueued: 5 });
      const started = startedOf(await stores.turns.nextTurn({ threadId: thread.id, owner: 'p', ttlMs: 30_000 }));
      expect(started.userMessage?.id).toBe(user.id);
      expect(started.context.window.map((entry) => entry.seq)).toEqual([1]);
      expect((await stores.transcript.findMessage(thread.id, answer.id))?.superseded).toBe(true);
    });

    it('hands threads with queued or interrupted turns and no live lease to the sweeper', async () => {
      const stores = make();
      const stranded = await newThread(stores);
      const leased = await newThread(stores);
      const cut = await newThread(stores);
      await send(stores, stranded.id, 'nobody runs me');
      await send(stores, leased.id, 'someone runs me');
      expect(await stores.turns.acquireLease({ threadId: leased.id, owner: 'alive', ttlMs: 60_000 })).toBe(true);
      await send(stores, cut.id, 'cut off');
      await interrupt(stores, cut.id);
      const found = await stores.turns.threadsWithStrandedTurns(10_000);
      expect(found).toContain(stranded.id);
      expect(found).toContain(cut.id);
      expect(found).not.toContain(leased.id);
    });

    it('runs an interrupted turn again once, in its place: its answers so far superseded and out of the window', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'earlier');
      const cut = await send(stores, thread.id, 'cut off', { clientMessageId: 'cut-1' });
      const after = await send(stores, thread.id, 'after');
      // The dying process finished one round into the window (seq 4) and was streaming the next (seq 5).
      const { started, partial } = await interrupt(stores, thread.id, { round: 'round one', partial: 'Par' });
      expect(started.userMessage).toMatchObject({ id: cut.message.id, seq: 3 });
      // A send's kick may take the expired lease before the sweeper ran: the later turn does not start first.
      expect(await stores.turns.nextTurn({ threadId: thread.id, owner: 'new', ttlMs: 30_000 })).toEqual({
        outcome: 'idle',
      });
      expect((await stores.turns.findTurn(after.turn.id))?.status).toBe('queued');

      const recovered = await stores.turns.recoverInterruptedTurns({ threadId: thread.id, resume: true, error: CUT });
      expect(recovered.failed).toEqual([]);
      expect(recovered.resumed).toHaveLength(1);
      const rerunId = recovered.resumed[0]!;
      expect(await stores.turns.findTurn(started.turn.id)).toMatchObject({ status: 'error', error: CUT });
      expect(await stores.turns.findTurn(rerunId)).toMatchObject({
        status: 'queued',
        kind: 'message',
        userMessageId: cut.message.id,
      });
      const cutAnswers = await stores.transcript.listTurnMessages(started.turn.id);
      expect(cutAnswers.map((message) => [message.content, message.status, message.superseded])).toEqual([
        ['round one', 'complete', true],
        ['Par', 'error', true],
      ]);
      expect(cutAnswers[1]?.error).toEqual(CUT);
      expect(partial.seq).toBe(5);
      // The client's own resend of the message finds the turn that will answer it.
      const resent = await send(stores, thread.id, 'cut off', { clientMessageId: 'cut-1' });
      expect(resent).toMatchObject({ duplicate: true, message: { id: cut.message.id }, turn: { id: rerunId } });
      // Once recovered, nothing is left to recover.
      expect(await stores.turns.recoverInterruptedTurns({ threadId: thread.id, resume: true, error: CUT })).toEqual({
        resumed: [],
        failed: [],
      });

      // The re-run starts before the later send; its user message keeps its seq; the window lost the cut answers.
      const rerun = startedOf(await stores.turns.nextTurn({ threadId: thread.id, owner: 'new', ttlMs: 30_000 }));
      expect(rerun.turn.id).toBe(rerunId);
      expect(rerun.userMessage).toMatchObject({ id: cut.message.id, seq: 3 });
      expect(rerun.context.window.map((entry) => entry.seq)).toEqual([1, 2, 3]);
      await answerTurn(stores, thread.id, rerunId, 'whole answer');
      const next = await stores.turns.completeTurn({
        turnId: rerunId,
        threadId: thread.id,
        owner: 'new',
        ttlMs: 30_000,
      });
      const later = startedOf(next.next);
      expect(later.turn.id).toBe(after.turn.id);
      expect(later.userMessage).toMatchObject({ id: after.message.id, seq: 7 });
      expect(later.context.window.map((entry) => entry.seq)).toEqual([1, 2, 3, 6, 7]);
    });

    it('ends a re-run cut off too, and any cut turn with RESUME_INTERRUPTED_TURNS=fail, with the error in an answer', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const cut = await send(stores, thread.id, 'cut twice');
      await interrupt(stores, thread.id, { partial: 'Par' });
      const [rerunId] = (await stores.turns.recoverInterruptedTurns({ threadId: thread.id, resume: true, error: CUT }))
        .resumed;
      // The re-run is cut off too, before it wrote anything: an error answer is appended, so the message has one.
      const again = await interrupt(stores, thread.id);
      expect(again.started.turn.id).toBe(rerunId);
      expect(await stores.turns.recoverInterruptedTurns({ threadId: thread.id, resume: true, error: CUT })).toEqual({
        resumed: [],
        failed: [rerunId],
      });
      expect(await stores.turns.findTurn(rerunId!)).toMatchObject({ status: 'error', error: CUT });
      const answers = await stores.transcript.listTurnMessages(rerunId!);
      expect(answers).toHaveLength(1);
      expect(answers[0]).toMatchObject({ role: 'assistant', status: 'error', error: CUT, content: '', seq: 3 });
      expect(answers[0]?.superseded).toBe(false);
      expect(await stores.turns.threadsWithStrandedTurns(10_000)).not.toContain(thread.id);
      expect((await stores.transcript.findMessage(thread.id, cut.message.id))?.seq).toBe(1);

      // fail: the streaming answer itself ends with the error, its text kept, nothing queued again.
      const other = await newThread(stores);
      await send(stores, other.id, 'cut once');
      const { started, partial } = await interrupt(stores, other.id, { partial: 'Par' });
      expect(await stores.turns.recoverInterruptedTurns({ threadId: other.id, resume: false, error: CUT })).toEqual({
        resumed: [],
        failed: [started.turn.id],
      });
      expect(await stores.transcript.findMessage(other.id, partial.id)).toMatchObject({
        status: 'error',
        content: 'Par',
        error: CUT,
        superseded: false,
      });
      expect(await stores.turns.hasQueuedTurns(other.id)).toBe(false);
      expect(await stores.turns.threadsWithStrandedTurns(10_000)).not.toContain(other.id);
    });

    it('recovers nothing while a live lease is held (the turn is running somewhere)', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await send(stores, thread.id, 'running');
      const started = startedOf(await stores.turns.nextTurn({ threadId: thread.id, owner: 'alive', ttlMs: 60_000 }));
      expect(await stores.turns.recoverInterruptedTurns({ threadId: thread.id, resume: true, error: CUT })).toEqual({
        resumed: [],
        failed: [],
      });
      expect((await stores.turns.findTurn(started.turn.id))?.status).toBe('running');
    });

    it('saves recounted token counts on window entries and answers null for an unknown thread', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'count me');
      await stores.turns.saveTokenCounts({
        threadId: thread.id,
        encoding: 'cl100k_base',
        entries: [
          { seq: 1, tokens: 3 },
          { seq: 2, tokens: 7 },
        ],
        summaryTokens: null,
      });
      const context = await stores.turns.loadContext(thread.id);
      expect(context?.window.map((entry) => [entry.seq, entry.tokens, entry.tokenEncoding])).toEqual([
        [1, 3, 'cl100k_base'],
        [2, 7, 'cl100k_base'],
      ]);
      expect(await stores.turns.loadContext(randomUUID())).toBeNull();
      expect(await stores.turns.findTurn(randomUUID())).toBeNull();
    });
  });
}
