import { describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../domain/types';
import { clientViewOf } from './client-view';
import { chooseBranch, reconcileHistory, type Reconciled } from './reconcile-history';
import type { ClientMessage } from '../ports';

let nextSeq = 1;
function message(
  role: TranscriptMessage['role'],
  content: string,
  extra: Partial<TranscriptMessage> = {},
): TranscriptMessage {
  const seq = nextSeq++;
  return {
    id: `m${seq}`,
    threadId: 't',
    seq,
    role,
    content,
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

function transcript(...messages: TranscriptMessage[]): TranscriptMessage[] {
  nextSeq = 1;
  return messages.map((each, index) => ({ ...each, seq: each.seq === null ? null : index + 1, id: `m${index + 1}` }));
}

const SERVER_TOOLS = new Set(['calculator', 'search_transcript']);
const user = (content: string): ClientMessage => ({ role: 'user', content });
const assistant = (content: string, toolCalls: { id: string; name: string }[] = []): ClientMessage => ({
  role: 'assistant',
  content,
  toolCalls: toolCalls.map((call) => ({ ...call, arguments: '{}' })),
});
const tool = (toolCallId: string, content: string): ClientMessage => ({ role: 'tool', toolCallId, content });

/** u1 a1 u2 a2: a plain two-turn thread. */
const twoTurns = transcript(
  message('user', 'hello'),
  message('assistant', 'hi there'),
  message('user', 'what is 2+2?'),
  message('assistant', '4'),
);

describe('clientViewOf', () => {
  it('shows user messages and answers in order', () => {
    expect(
      clientViewOf(twoTurns, SERVER_TOOLS).map((item) => [item.role, item.content, item.firstSeq, item.lastSeq]),
    ).toEqual([
      ['user', 'hello', 1, 1],
      ['assistant', 'hi there', 2, 2],
      ['user', 'what is 2+2?', 3, 3],
      ['assistant', '4', 4, 4],
    ]);
  });

  it('folds a server-tool round into one answer: the calls and results are ours, the texts are joined as streamed', () => {
    const view = clientViewOf(
      transcript(
        message('user', 'compute'),
        message('assistant', 'Let me compute.', { toolCalls: [{ id: 'c1', name: 'calculator', args: {} }] }),
        message('tool', '42', { toolCallId: 'c1' }),
        message('assistant', 'It is 42.'),
      ),
      SERVER_TOOLS,
    );
    expect(view).toHaveLength(2);
    expect(view[1]).toMatchObject({
      role: 'assistant',
      content: 'Let me compute.\n\nIt is 42.',
      toolCalls: [],
      firstSeq: 2,
      lastSeq: 4,
      messageId: 'm4',
    });
  });

  it("joins a saved memory's note into its answer as the client received it; an unmarked note, or another turn's, stays out", () => {
    const note = '[memory] Proposed for your saved memories (approve or dismiss it in Saved memories): "Vegan."';
    const view = clientViewOf(
      transcript(
        message('user', 'Remember: Vegan.'),
        message('assistant', '', { turnId: 'T1', toolCalls: [{ id: 'c1', name: 'save_memory', args: {} }] }),
        message('tool', 'Proposed.', { turnId: 'T1', toolCallId: 'c1' }),
        message('system', note, { turnId: 'T1' }),
        message('assistant', 'Noted.', { turnId: 'T1' }),
        message('user', 'And?'),
        message('assistant', 'Fine.', { turnId: 'T2' }),
        message('system', 'Saved to your memories: "An old note."', { turnId: 'T2' }),
        message('system', `${note} (late)`, { turnId: 'T9' }),
      ),
      new Set([...SERVER_TOOLS, 'save_memory']),
    );
    expect(view.map((item) => [item.role, item.content])).toEqual([
      ['user', 'Remember: Vegan.'],
      ['assistant', `${note}\n\nNoted.`],
      ['user', 'And?'],
      ['assistant', 'Fine.'],
    ]);
    expect(view[1]).toMatchObject({ firstSeq: 2, lastSeq: 5, messageId: 'm5' });
  });

  it('leaves out notices, async notes, superseded, forgotten and errored messages', () => {
    const view = clientViewOf(
      transcript(
        message('user', 'hello'),
        message('assistant', 'old answer', { superseded: true }),
        message('assistant', 'new answer'),
        message('system', 'Tool limit reached'),
        message('tool', 'async result', { toolRunId: 'run-1', toolCallId: 'x' }),
        message('user', 'forgotten', { deleted: true }),
        message('user', 'again'),
        message('assistant', '', { status: 'error', error: { code: 'PROVIDER_ERROR', message: 'down' } }),
      ),
      SERVER_TOOLS,
    );
    expect(view.map((item) => [item.role, item.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'new answer'],
      ['user', 'again'],
    ]);
  });

  it('shows client tool calls and their results; a streaming answer is in progress', () => {
    const view = clientViewOf(
      transcript(
        message('user', 'weather?'),
        message('assistant', '', { toolCalls: [{ id: 'w1', name: 'get_weather', args: { city: 'Oslo' } }] }),
        message('tool', 'rainy', { toolCallId: 'w1' }),
        message('assistant', 'It rains', { status: 'streaming' }),
      ),
      SERVER_TOOLS,
    );
    expect(view.map((item) => item.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(view[1]).toMatchObject({ toolCalls: [{ id: 'w1', name: 'get_weather' }] });
    expect(view[3]?.inProgress).toBe(true);
  });
});

describe('reconcileHistory', () => {
  const stored = clientViewOf(twoTurns, SERVER_TOOLS);
  const history = [user('hello'), assistant('hi there'), user('what is 2+2?'), assistant('4')];

  it('a new trailing user message is a turn', () => {
    expect(reconcileHistory([...history, user('and 3+3?')], stored)).toEqual({
      kind: 'send',
      content: 'and 3+3?',
      matched: 4,
    });
  });

  it('the first message of an empty thread is a turn', () => {
    expect(reconcileHistory([user('hi')], [])).toMatchObject({ kind: 'send', content: 'hi', matched: 0 });
  });

  it('white space and line endings around a message do not count', () => {
    const sloppy = [user('hello\r\n'), assistant('  hi there'), user('what is 2+2?'), assistant('4\n'), user('next')];
    expect(reconcileHistory(sloppy, stored)).toMatchObject({ kind: 'send', matched: 4 });
  });

  it('the last user message already answered is a regeneration in place', () => {
    expect(reconcileHistory(history.slice(0, 3), stored)).toMatchObject({
      kind: 'regenerate',
      userMessageId: 'm3',
      forkThroughSeq: null,
      matched: 3,
    });
  });

  it('an earlier user message already answered is a regeneration on a fork through it', () => {
    expect(reconcileHistory(history.slice(0, 1), stored)).toMatchObject({
      kind: 'regenerate',
      userMessageId: 'm1',
      forkThroughSeq: 1,
      matched: 1,
    });
  });

  it('an unanswered last user message (its answer failed) is answered again', () => {
    const failed = clientViewOf(
      transcript(message('user', 'hello'), message('assistant', '', { status: 'error' })),
      SERVER_TOOLS,
    );
    expect(reconcileHistory([user('hello')], failed)).toMatchObject({
      kind: 'regenerate',
      userMessageId: 'm1',
      forkThroughSeq: null,
    });
  });

  it('a changed last user message is an edit of the stored one', () => {
    expect(reconcileHistory([user('hello'), assistant('hi there'), user('what is 3+3?')], stored)).toMatchObject({
      kind: 'edit',
      userMessageId: 'm3',
      content: 'what is 3+3?',
      matched: 2,
    });
    expect(reconcileHistory([user('hey')], stored)).toMatchObject({ kind: 'edit', userMessageId: 'm1', matched: 0 });
  });

  it('refuses an assistant message it did not write, and more than one new message', () => {
    expect(reconcileHistory([user('hello'), assistant('something else'), user('x')], stored)).toMatchObject({
      kind: 'refuse',
      matched: 1,
    });
    expect(reconcileHistory([...history, user('a'), assistant('b'), user('c')], stored)).toMatchObject({
      kind: 'refuse',
      matched: 4,
    });
    expect(reconcileHistory([user('x'), assistant('y'), user('z')], [])).toMatchObject({ kind: 'refuse', matched: 0 });
  });

  it('refuses a history that edits an earlier message and goes on past it', () => {
    expect(reconcileHistory([user('changed'), assistant('hi there'), user('what is 2+2?')], stored)).toMatchObject({
      kind: 'refuse',
    });
  });

  it('refuses a history ending with an answer the thread holds', () => {
    expect(reconcileHistory(history, stored)).toMatchObject({ kind: 'refuse', matched: 4 });
  });

  it("an answer stopped before its first word is not part of the history: the client's next message is a send", () => {
    const stopped = clientViewOf(
      transcript(message('user', 'tell a story'), message('assistant', '', { status: 'cancelled' })),
      SERVER_TOOLS,
    );
    expect(reconcileHistory([user('tell a story'), user('something else')], stopped)).toMatchObject({
      kind: 'send',
      content: 'something else',
      matched: 1,
    });
    expect(reconcileHistory([user('tell a story')], stopped)).toMatchObject({
      kind: 'regenerate',
      forkThroughSeq: null,
    });
  });

  it('a stopped answer matches what the client kept of it, and only a stopped one', () => {
    const stopped = clientViewOf(
      transcript(
        message('user', 'tell a story'),
        message('assistant', 'Once upon a time there', { status: 'cancelled' }),
      ),
      SERVER_TOOLS,
    );
    expect(reconcileHistory([user('tell a story'), assistant('Once upon a'), user('go on')], stopped)).toMatchObject({
      kind: 'send',
      content: 'go on',
      matched: 2,
    });
    expect(
      reconcileHistory([user('tell a story'), assistant('Once upon a time there was'), user('go on')], stopped),
    ).toMatchObject({ kind: 'send' });
    expect(
      reconcileHistory([user('tell a story'), assistant('A different tale'), user('go on')], stopped),
    ).toMatchObject({ kind: 'refuse', matched: 1 });
    expect(reconcileHistory([user('hello'), assistant('hi'), user('next')], stored)).toMatchObject({
      kind: 'refuse',
      matched: 1,
    });
  });

  it('is busy while an answer is being written', () => {
    const streaming = clientViewOf(
      transcript(message('user', 'hello'), message('assistant', 'hi', { status: 'streaming' })),
      SERVER_TOOLS,
    );
    expect(reconcileHistory([user('hello')], streaming)).toMatchObject({ kind: 'busy' });
  });

  describe('client tools', () => {
    const called = clientViewOf(
      transcript(
        message('user', 'weather in Oslo and Rome?'),
        message('assistant', 'Checking.', {
          toolCalls: [
            { id: 'w1', name: 'get_weather', args: {} },
            { id: 'w2', name: 'get_weather', args: {} },
          ],
        }),
      ),
      SERVER_TOOLS,
    );
    const asked = [
      user('weather in Oslo and Rome?'),
      assistant('Checking.', [
        { id: 'w1', name: 'get_weather' },
        { id: 'w2', name: 'get_weather' },
      ]),
    ];

    it('the results of the calls are stored before the turn goes on', () => {
      expect(reconcileHistory([...asked, tool('w1', 'rain'), tool('w2', 'sun')], called)).toEqual({
        kind: 'tool-results',
        assistantMessageId: 'm2',
        results: [
          { toolCallId: 'w1', content: 'rain' },
          { toolCallId: 'w2', content: 'sun' },
        ],
        then: null,
        matched: 2,
      });
      expect(
        reconcileHistory([...asked, tool('w1', 'rain'), tool('w2', 'sun'), user('thanks, and Paris?')], called),
      ).toMatchObject({ kind: 'tool-results', then: 'thanks, and Paris?' });
    });

    it('refuses missing, unknown and stray results', () => {
      expect(reconcileHistory([...asked, tool('w1', 'rain')], called)).toMatchObject({
        kind: 'refuse',
        reason: expect.stringContaining('w2'),
      });
      expect(
        reconcileHistory([...asked, tool('w1', 'rain'), tool('w2', 'sun'), tool('w3', '?')], called),
      ).toMatchObject({ kind: 'refuse', reason: expect.stringContaining('w3') });
      expect(reconcileHistory([...history, tool('w1', 'rain')], stored)).toMatchObject({ kind: 'refuse' });
      expect(reconcileHistory(asked, called)).toMatchObject({
        kind: 'refuse',
        reason: expect.stringContaining('tool'),
      });
    });

    it('a stored exchange of client tools is recognised like any message', () => {
      const answered = clientViewOf(
        transcript(
          message('user', 'weather?'),
          message('assistant', '', { toolCalls: [{ id: 'w1', name: 'get_weather', args: {} }] }),
          message('tool', 'rain', { toolCallId: 'w1' }),
          message('assistant', 'It rains.'),
        ),
        SERVER_TOOLS,
      );
      const history2 = [
        user('weather?'),
        assistant('', [{ id: 'w1', name: 'get_weather' }]),
        tool('w1', 'rain'),
        assistant('It rains.'),
        user('umbrella?'),
      ];
      expect(reconcileHistory(history2, answered)).toMatchObject({ kind: 'send', matched: 4 });
    });
  });
});

describe('chooseBranch', () => {
  const branch = (id: string, plan: Reconciled) => ({ id, plan });

  it('follows the branch the history fully matches, newest first', () => {
    const chosen = chooseBranch([
      branch('newest', { kind: 'edit', userMessageId: 'm3', content: 'x', matched: 2 }),
      branch('older', { kind: 'send', content: 'x', matched: 4 }),
      branch('oldest', { kind: 'send', content: 'x', matched: 4 }),
    ]);
    expect(chosen?.id).toBe('older');
  });

  it('else forks from the branch holding the longest part of the history', () => {
    const chosen = chooseBranch([
      branch('a', { kind: 'edit', userMessageId: 'm1', content: 'x', matched: 0 }),
      branch('b', { kind: 'edit', userMessageId: 'm5', content: 'x', matched: 4 }),
      branch('c', { kind: 'refuse', reason: 'no', matched: 6 }),
    ]);
    expect(chosen?.id).toBe('b');
  });

  it('is the newest when nothing fits, and none without candidates', () => {
    expect(
      chooseBranch([
        branch('a', { kind: 'refuse', reason: 'no', matched: 1 }),
        branch('b', { kind: 'refuse', reason: 'no', matched: 3 }),
      ])?.id,
    ).toBe('a');
    expect(chooseBranch([])).toBeNull();
  });
});
