import { describe, expect, it } from 'vitest';
import type { ToolRunDto } from '../../../src/shared/api';
import { threadReducer, type ThreadAction } from './thread-reducer';
import { isAnswering, type ThreadState } from './thread-state';
import { testMessage, testThread } from './thread-test-fixtures';

const message = testMessage;

const thread = testThread;

function run(actions: ThreadAction[], start: ThreadState | null = null): ThreadState | null {
  return actions.reduce(threadReducer, start);
}

function opened(...actions: ThreadAction[]): ThreadState {
  const state = run([{ type: 'thread-opened', threadId: 't1' }, ...actions]);
  if (!state) throw new Error('no thread open');
  return state;
}

describe('thread reducer: opening, joining, sending', () => {
  it('opens a thread empty, and closes it to null', () => {
    const state = opened();
    expect(state).toMatchObject({ threadId: 't1', messages: [], outgoing: [], runningTurns: [], notice: null });
    expect(threadReducer(state, { type: 'thread-opened', threadId: null })).toBeNull();
  });

  it('ignores every action but opening while no thread is open', () => {
    const error = { code: 'INTERNAL' as const, message: 'boom' };
    expect(threadReducer(null, { type: 'notice', error })).toBeNull();
    expect(threadReducer(null, { type: 'messages-received', messages: [message({})] })).toBeNull();
  });

  it('takes older pages from a fresh join only, not from a catch-up join', () => {
    const first = message({ seq: 5 });
    const fresh = opened({ type: 'joined', messages: [first], thread: thread(), hasMoreBefore: true });
    expect(fresh.hasMoreBefore).toBe(true);
    expect(fresh.thread?.title).toBe('A thread');
    const caughtUp = threadReducer(fresh, { type: 'joined', messages: [message({ seq: 6 })], thread: thread() });
    expect(caughtUp?.hasMoreBefore).toBe(true);
    expect(caughtUp?.messages.map((item) => item.seq)).toEqual([5, 6]);
  });

  it('sends from the outbox: queued, sending, then stored with its turn running until turn-end', () => {
    const item = { clientMessageId: 'c1', content: 'hello', createdAt: '' };
    let state = opened({ type: 'outgoing-queued', item });
    expect(state.outgoing).toMatchObject([{ clientMessageId: 'c1', state: 'waiting', error: null }]);
    state = threadReducer(state, { type: 'outgoing-updated', clientMessageId: 'c1', patch: { state: 'sending' } })!;
    expect(state.outgoing[0]?.state).toBe('sending');
    const stored = message({ role: 'user', clientMessageId: 'c1', content: 'hello' });
    state = threadReducer(state, { type: 'message-sent', message: stored, turnId: 'turn-1' })!;
    expect(state.outgoing).toEqual([]);
    expect(state.messages.map((item) => item.id)).toEqual([stored.id]);
    expect(state.runningTurns).toEqual(['turn-1']);
    expect(isAnswering(state)).toBe(true);
    state = threadReducer(state, { type: 'turn-ended', turnId: 'turn-1' })!;
    expect(isAnswering(state)).toBe(false);
  });

  it('keeps a refused message in the outbox until discarded', () => {
    const error = { code: 'VALIDATION' as const, message: 'too long' };
    let state = opened({ type: 'outgoing-queued', item: { clientMessageId: 'c1', content: 'x', createdAt: '' } });
    state = threadReducer(state, {
      type: 'outgoing-updated',
      clientMessageId: 'c1',
      patch: { state: 'failed', error },
    })!;
    expect(state.outgoing[0]).toMatchObject({ state: 'failed', error });
    state = threadReducer(state, { type: 'outgoing-discarded', clientMessageId: 'c1' })!;
    expect(state.outgoing).toEqual([]);
  });

  it('ends a REST turn (retry, regenerate) with its messages, or with its error as the notice', () => {
    const answer = message({ content: 'again' });
    let state = opened({ type: 'turn-started', turnId: 'retry-m1' }, { type: 'turn-started', turnId: 'retry-m1' });
    expect(state.runningTurns).toEqual(['retry-m1']);
    state = threadReducer(state, { type: 'turn-ended', turnId: 'retry-m1', messages: [answer] })!;
    expect(state.runningTurns).toEqual([]);
    expect(state.messages.map((item) => item.content)).toEqual(['again']);
    const error = { code: 'UNAVAILABLE' as const, message: 'down' };
    state = threadReducer(state, { type: 'turn-started', turnId: 'regenerate-t1' })!;
    state = threadReducer(state, { type: 'turn-ended', turnId: 'regenerate-t1', error })!;
    expect(state).toMatchObject({ runningTurns: [], notice: error });
    expect(threadReducer(state, { type: 'notice', error: null })?.notice).toBeNull();
  });
});

describe('thread reducer: events and pages', () => {
  it('streams a message by deltas and pages older messages in below it', () => {
    const streaming = message({ seq: 40, status: 'streaming', content: 'Hel' });
    let state = opened({ type: 'messages-received', messages: [streaming] });
    state = threadReducer(state, { type: 'delta-received', messageId: streaming.id, offset: 3, delta: 'lo' })!;
    expect(state.messages[0]?.content).toBe('Hello');
    state = threadReducer(state, { type: 'page-loaded', messages: [message({ seq: 10 })], hasMoreBefore: false })!;
    expect(state.messages.map((item) => item.seq)).toEqual([10, 40]);
    expect(state.hasMoreBefore).toBe(false);
  });

  it('follows thread updates and context resets of its own thread only', () => {
    let state = opened({ type: 'thread-updated', thread: thread({ title: 'Renamed' }) });
    expect(state.thread?.title).toBe('Renamed');
    state = threadReducer(state, { type: 'thread-updated', thread: thread({ id: 't2', title: 'Other' }) })!;
    expect(state.thread?.title).toBe('Renamed');
    state = threadReducer(state, { type: 'context-reset', seq: 7 })!;
    expect(state.thread?.contextStartSeq).toBe(7);
    const forgotten = message({ deleted: true });
    state = threadReducer(state, {
      type: 'thread-updated',
      thread: thread({ title: 'After' }),
      messages: [forgotten],
    })!;
    expect(state.messages.map((item) => item.id)).toEqual([forgotten.id]);
  });

  it('tracks a tool run and its progress, never backwards', () => {
    const toolRun = { id: 'r1', status: 'running', progress: 0.5, progressNote: null } as unknown as ToolRunDto;
    let state = opened({ type: 'tool-run-updated', run: toolRun });
    state = threadReducer(state, { type: 'tool-progress', runId: 'r1', progress: 0.2, note: 'halfway' })!;
    expect(state.toolRuns.r1).toMatchObject({ progress: 0.5, progressNote: 'halfway' });
    state = threadReducer(state, { type: 'tool-progress', runId: 'r1', progress: 0.9 })!;
    expect(state.toolRuns.r1).toMatchObject({ progress: 0.9, progressNote: 'halfway' });
  });
});
