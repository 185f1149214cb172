import { describe, expect, it } from 'vitest';
import { TurnRunner } from '../core/turn/turn-runner';
import { createMemoryStores, createScriptedChatModel, scriptedText, type ScriptedCall } from '../../test/fakes';
import { silentLog, testSettings } from '../../test/fakes/summary-use-case-fakes';
import { createSweeper } from './sweeper';

// Issue 33 item 8: a turn cut by a crash (its process died mid-answer, its lease expired) is answered after the
// restart, through the sweeper: run again once (RESUME_INTERRUPTED_TURNS=retry), else ended with INTERRUPTED.

/** The last user message a call was given. */
const questionOf = (call: ScriptedCall) =>
  call.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';

/** A model that answers "answer to <the last user message>", recording its calls. */
function echoChat() {
  return createScriptedChatModel({
    model: 'fake-chat',
    fallback: (call) =>
      scriptedText([`answer to ${questionOf(call)}`], { usage: { promptTokens: 10, completionTokens: 3 } }),
  });
}

/** A thread with two sends; a process started the first one's turn, streamed "Par", and died (1 ms lease). */
async function cutMidAnswer() {
  const stores = createMemoryStores();
  await stores.threads.ensureUser('user-1', 'guest');
  const thread = await stores.threads.createThread({ ownerId: 'user-1', maxThreads: 10 });
  const send = (content: string) =>
    stores.turns.acceptUserMessage({
      threadId: thread.id,
      ownerId: null,
      content,
      tokens: 3,
      encoding: 'o200k_base',
      clientMessageId: null,
      maxQueued: 5,
    });
  const first = await send('first');
  const second = await send('second');
  await dieMidTurn(stores, thread.id, 'Par');
  return { stores, threadId: thread.id, first, second };
}

/** Starts the thread's next turn as a process that dies at once (optionally mid-stream). */
async function dieMidTurn(stores: ReturnType<typeof createMemoryStores>, threadId: string, partial?: string) {
  const started = await stores.turns.nextTurn({ threadId, owner: 'dead-process', ttlMs: 1 });
  if (started.outcome !== 'started') throw new Error('nothing started');
  if (partial)
    await stores.turns.appendTurnMessage({
      threadId,
      turnId: started.turn.id,
      role: 'assistant',
      content: partial,
      status: 'streaming',
    });
  await new Promise((resolve) => setTimeout(resolve, 10));
  return started.turn;
}

/** The restarted process: its runner, and a sweeper that hands recovered threads to it. */
function restartedProcess(stores: ReturnType<typeof createMemoryStores>, interruptedTurns?: 'retry' | 'fail') {
  const chat = echoChat();
  const runner = new TurnRunner({
    turns: stores.turns,
    calls: { record: async () => undefined },
    events: { publish: () => undefined, subscribe: () => () => undefined, subscribeAll: () => () => undefined },
    chat,
    folds: { enqueueFold: async () => null },
    foldNow: async () => undefined,
    settings: testSettings(),
    log: silentLog,
    owner: 'restarted-process',
    streamSaveMs: 1_000_000,
  });
  const drains: Promise<void>[] = [];
  const sweeper = createSweeper({
    turns: stores.turns,
    summaries: stores.summaries,
    folds: { enqueueFold: async () => null },
    settings: testSettings(),
    log: silentLog,
    resumeTurns: (threadId) => drains.push(runner.kick(threadId)),
    ...(interruptedTurns ? { interruptedTurns } : {}),
  });
  return {
    /** The questions the restarted process's model was asked. */
    asked: () => chat.calls.map(questionOf),
    async sweep() {
      const result = await sweeper.sweep();
      await Promise.all(drains);
      return result;
    },
  };
}

/** The thread's transcript as [seq, role, content, status, superseded, error code]. */
function transcript(stores: ReturnType<typeof createMemoryStores>, threadId: string) {
  return stores.database.messages
    .filter((message) => message.threadId === threadId)
    .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))
    .map((message) => [
      message.seq,
      message.role,
      message.content,
      message.status,
      message.superseded,
      message.error?.code ?? null,
    ]);
}

describe('sweeper: turns cut by a dead process', () => {
  it('runs the cut turn again once, before the later send: every message ends with exactly one finished answer', async () => {
    const { stores, threadId } = await cutMidAnswer();
    const restarted = restartedProcess(stores);

    expect((await restarted.sweep()).threadsResumed).toBe(1);
    expect(restarted.asked()).toEqual(['first', 'second']);
    expect(transcript(stores, threadId)).toEqual([
      [1, 'user', 'first', 'complete', false, null],
      [2, 'assistant', 'Par', 'error', true, 'INTERRUPTED'],
      [3, 'assistant', 'answer to first', 'complete', false, null],
      [4, 'user', 'second', 'complete', false, null],
      [5, 'assistant', 'answer to second', 'complete', false, null],
    ]);
    expect(stores.database.turns.filter((turn) => turn.status === 'queued' || turn.status === 'running')).toEqual([]);
    // The next sweep finds nothing left to do.
    expect((await restarted.sweep()).threadsResumed).toBe(0);
  });

  it('ends a re-run cut off too with INTERRUPTED (never INTERNAL), in an answer the user can retry', async () => {
    const { stores, threadId } = await cutMidAnswer();
    // The first recovery re-queues the turn; another process starts the re-run and dies before writing anything.
    const idle = createSweeper({
      turns: stores.turns,
      summaries: stores.summaries,
      folds: { enqueueFold: async () => null },
      settings: testSettings(),
      log: silentLog,
      resumeTurns: () => undefined,
    });
    await idle.sweep();
    await dieMidTurn(stores, threadId);
    const restarted = restartedProcess(stores);

    await restarted.sweep();
    expect(restarted.asked()).toEqual(['second']);
    expect(transcript(stores, threadId)).toEqual([
      [1, 'user', 'first', 'complete', false, null],
      [2, 'assistant', 'Par', 'error', true, 'INTERRUPTED'],
      [3, 'assistant', '', 'error', false, 'INTERRUPTED'],
      [4, 'user', 'second', 'complete', false, null],
      [5, 'assistant', 'answer to second', 'complete', false, null],
    ]);
    const cut = stores.database.messages.find((message) => message.seq === 3 && message.threadId === threadId);
    expect(cut?.error?.message).toMatch(/server restart.*Retry/);
    expect(stores.database.turns.filter((turn) => turn.status === 'error').map((turn) => turn.error?.code)).toEqual([
      'INTERRUPTED',
      'INTERRUPTED',
    ]);
  });

  it('RESUME_INTERRUPTED_TURNS=fail: the cut answer ends with INTERRUPTED, its text kept, and the queue goes on', async () => {
    const { stores, threadId } = await cutMidAnswer();
    const restarted = restartedProcess(stores, 'fail');

    await restarted.sweep();
    expect(restarted.asked()).toEqual(['second']);
    expect(transcript(stores, threadId)).toEqual([
      [1, 'user', 'first', 'complete', false, null],
      [2, 'assistant', 'Par', 'error', false, 'INTERRUPTED'],
      [3, 'user', 'second', 'complete', false, null],
      [4, 'assistant', 'answer to second', 'complete', false, null],
    ]);
  });
});
