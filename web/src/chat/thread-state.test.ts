import { describe, expect, it } from 'vitest';
import {
  applyDelta,
  catchUpAfterSeq,
  contextDivider,
  contextReset,
  emptyThreadState,
  isAnswering,
  mergeMessages,
  queueOutgoing,
  regenerableAnswer,
  setThread,
} from './thread-state';
import { testMessage, testThread } from './thread-test-fixtures';

const message = testMessage;

describe('thread state', () => {
  it('keeps one copy of a message seen through a page, an event and a catch-up', () => {
    const first = message({ seq: 1, role: 'user', content: 'hi' });
    let state = mergeMessages(emptyThreadState('t1'), [first]);
    state = mergeMessages(state, [first, message({ id: first.id, seq: 1, role: 'user', content: 'hi' })]);
    expect(state.messages.map((item) => item.id)).toEqual([first.id]);
  });

  it('orders by seq with queued messages last', () => {
    const queued = message({ seq: null, role: 'user', content: 'later' });
    const old = message({ seq: 2 });
    const older = message({ seq: 1 });
    const state = mergeMessages(emptyThreadState('t1'), [queued, old, older]);
    expect(state.messages.map((item) => item.seq)).toEqual([1, 2, null]);
  });

  it('appends deltas at their offset and drops the ones it already has', () => {
    const streaming = message({ status: 'streaming', content: 'Hel' });
    let state = mergeMessages(emptyThreadState('t1'), [streaming]);
    state = applyDelta(state, { messageId: streaming.id, offset: 0, delta: 'Hel' });
    state = applyDelta(state, { messageId: streaming.id, offset: 3, delta: 'lo' });
    state = applyDelta(state, { messageId: streaming.id, offset: 3, delta: 'lo' });
    state = applyDelta(state, { messageId: streaming.id, offset: 4, delta: 'o w' });
    expect(state.messages[0]?.content).toBe('Hello w');
    // A gap is not filled with a later piece: message-end brings the whole text.
    expect(applyDelta(state, { messageId: streaming.id, offset: 20, delta: 'x' })).toBe(state);
  });

  it('does not let an older partial text replace a longer one, nor a streaming copy replace the final one', () => {
    const streaming = message({ status: 'streaming', content: 'Hello world' });
    let state = mergeMessages(emptyThreadState('t1'), [streaming]);
    state = mergeMessages(state, [{ ...streaming, content: 'Hello' }]);
    expect(state.messages[0]?.content).toBe('Hello world');
    state = mergeMessages(state, [{ ...streaming, status: 'complete', content: 'Hello world!' }]);
    state = mergeMessages(state, [{ ...streaming, content: 'Hello' }]);
    expect(state.messages[0]).toMatchObject({ status: 'complete', content: 'Hello world!' });
  });

  it('catches up from before the first unfinished message', () => {
    const state = mergeMessages(emptyThreadState('t1'), [
      message({ seq: 4 }),
      message({ seq: 5, role: 'user' }),
      message({ seq: 6, status: 'streaming' }),
    ]);
    expect(catchUpAfterSeq(state)).toBe(5);
    expect(isAnswering(state)).toBe(true);
    expect(catchUpAfterSeq(emptyThreadState('t1'))).toBeUndefined();
  });

  it('drops an outgoing message once the server has stored it', () => {
    let state = queueOutgoing(emptyThreadState('t1'), {
      clientMessageId: 'c1',
      content: 'offline words',
      createdAt: '',
    });
    state = mergeMessages(state, [message({ role: 'user', clientMessageId: 'c1', content: 'offline words' })]);
    expect(state.outgoing).toEqual([]);
  });
});

describe('thread state: memory controls', () => {
  const thread = testThread({ title: 't' });

  const conversation = () => {
    const messages = [
      message({ seq: 1, role: 'user' }),
      message({ seq: 2 }),
      message({ seq: 3, role: 'user' }),
      message({ seq: 4 }),
    ];
    return { messages, state: setThread(mergeMessages(emptyThreadState('t1'), messages), thread) };
  };

  it('applies message-updated versions: pinned, superseded and deleted replace the stored copy', () => {
    const { messages, state } = conversation();
    const updated = mergeMessages(state, [
      { ...messages[1]!, pinned: true },
      { ...messages[3]!, deleted: true, content: '' },
    ]);
    expect(updated.messages.map((entry) => [entry.seq, entry.pinned, entry.deleted])).toEqual([
      [1, false, false],
      [2, true, false],
      [3, false, false],
      [4, false, true],
    ]);
  });

  it('places the divider at the end with Undo until a message follows it, then before that message', () => {
    const { state } = conversation();
    expect(contextDivider(state)).toBeNull();
    const reset = contextReset(state, 5);
    expect(contextDivider(reset)).toEqual({ seq: 5, undoable: true });
    expect(contextDivider(mergeMessages(reset, [message({ seq: null, role: 'user' })]))).toEqual({
      seq: 5,
      undoable: false,
    });
    expect(contextDivider(mergeMessages(reset, [message({ seq: 5, role: 'user' })]))).toEqual({
      seq: 5,
      undoable: false,
    });
    expect(contextDivider(contextReset(reset, 1))).toBeNull();
    // Another thread's update is not this one's.
    expect(setThread(reset, { ...thread, id: 'other', contextStartSeq: 9 }).thread?.contextStartSeq).toBe(5);
  });

  it('offers Regenerate on the last finished answer only, skipping replaced ones', () => {
    const { messages, state } = conversation();
    expect(regenerableAnswer(state)?.id).toBe(messages[3]!.id);
    const replaced = mergeMessages(state, [
      { ...messages[3]!, superseded: true },
      message({ seq: 5, status: 'streaming' }),
    ]);
    expect(regenerableAnswer(replaced)).toBeNull();
    expect(regenerableAnswer(mergeMessages(state, [message({ seq: 5, role: 'user' })]))).toBeNull();
    expect(regenerableAnswer(contextReset(state, 5))).toBeNull();
  });
});
