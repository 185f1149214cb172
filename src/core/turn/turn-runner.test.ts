import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Turn } from '../domain/types';
import { ModelCallError } from '../errors/model-call-error';
import type { ModelCallRecord } from '../ports';
import { silentLog, testSettings } from '../../../test/fakes/summary-use-case-fakes';
import { createToolRegistry } from '../tools/tool-registry';
import type { ToolKit } from '../tools/tool-kit';
import { defineTool } from '../tools/types';
import type { ThreadEvent } from '../../shared/events';
import {
  createMemoryStores,
  createScriptedChatModel,
  memoryContext,
  scriptedFailure,
  scriptedText,
  scriptedToolCalls,
  type MemoryContextOptions,
  type ScriptStep,
} from '../../../test/fakes';
import { foldCommit } from '../../../test/contracts/store-fixtures';
import { toolChainNotice, TurnRunner } from './turn-runner';

// Issue 17 item 9: the turn runner on in-memory fakes (no Postgres, no Redis, no HTTP).

/** One thread on the in-memory stores of test/fakes (held to Postgres by test/contracts): the TurnStore a turn sees. */
async function memoryTurnStore(context: MemoryContextOptions = {}) {
  const stores = createMemoryStores(undefined, context);
  await stores.threads.ensureUser('user-1', 'guest');
  const { id: threadId } = await stores.threads.createThread({ ownerId: 'user-1', maxThreads: 10 });
  const { database } = stores;
  return {
    threadId,
    store: stores.turns,
    get messages() {
      return database.messages;
    },
    get window() {
      return memoryContext(database, threadId)?.window ?? [];
    },
    get turns() {
      return database.turns;
    },
    get calls() {
      return database.calls;
    },
    /** A user message waiting in the queue with its turn, as a send leaves it. */
    async send(content: string): Promise<Turn> {
      return (
        await stores.turns.acceptUserMessage({
          threadId,
          ownerId: null,
          content,
          tokens: 10,
          encoding: 'o200k_base',
          clientMessageId: null,
          maxQueued: 5,
        })
      ).turn;
    },
    followUp(): Promise<Turn> {
      return stores.turns.queueTurn({ threadId, kind: 'follow-up', userMessageId: null, maxQueued: 5 });
    },
    /** A fold's commit of #1–#throughSeq: their entries leave the window. */
    async fold(throughSeq: number) {
      const thread = await stores.threads.findThread(threadId, null);
      return stores.summaries.commit(foldCommit(threadId, thread?.version ?? 0, throughSeq));
    },
  };
}

const answer = (text: string) => scriptedText([text], { usage: { promptTokens: 50, completionTokens: 5 } });
const fail = (kind: ModelCallError['kind'], retryable: boolean) => scriptedFailure(kind, retryable);
const callTools = (...names: string[]) =>
  scriptedToolCalls(names.map((name, index) => ({ id: `call-${index}-${name}`, name, args: { text: name } })));
/** A pause in a streamed answer that lets the test know it was reached, and never ends (only an abort stops it). */
const reachedForever = (reached: () => void) => () => {
  reached();
  return new Promise<never>(() => undefined);
};

async function setup(steps: ScriptStep[], options: { tools?: ToolKit; recallTokens?: number } = {}) {
  const recallTokens = options.recallTokens ?? 0;
  const memory = await memoryTurnStore({ recallTokens });
  const chat = createScriptedChatModel({ model: 'fake-chat', replies: steps });
  const events: ThreadEvent[] = [];
  const recorded: ModelCallRecord[] = [];
  const folds: string[] = [];
  const foldNow: string[] = [];
  /** Title requests, each with the thread's turn statuses when it was made. */
  const titles: { threadId: string; turns: string[] }[] = [];
  const runner = new TurnRunner({
    requestTitle: async (threadId) => {
      titles.push({ threadId, turns: memory.turns.map((turn) => turn.status) });
    },
    turns: memory.store,
    calls: {
      record: async (call) => {
        recorded.push(call);
      },
    },
    events: {
      publish: (event) => {
        events.push(event);
      },
      subscribe: () => () => undefined,
      subscribeAll: () => () => undefined,
    },
    chat,
    folds: {
      enqueueFold: async (threadId) => {
        folds.push(threadId);
        return null;
      },
    },
    foldNow: async (threadId) => {
      foldNow.push(threadId);
    },
    settings: { ...testSettings(), recallTokens },
    log: silentLog,
    owner: 'process-1',
    retryBaseMs: 1,
    streamSaveMs: 1_000_000,
    ...(options.tools ? { tools: options.tools } : {}),
  });
  return { memory, runner, seen: chat.calls, events, recorded, folds, foldNow, titles };
}

function toolKit(
  options: { maxRounds?: number; followUps?: number; depth?: number; hidden?: boolean } = {},
): ToolKit & { executed: string[] } {
  const executed: string[] = [];
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes.',
    mode: 'inline',
    schema: z.object({ text: z.string() }),
    async run({ text }) {
      executed.push(text);
      return `echo: ${text}`;
    },
  });
  const unused = async () => {
    throw new Error('not used');
  };
  // A configured tool whose schema is past the cap (TOOL_SCHEMA_MAX_TOKENS): registered, never offered.
  const registry = createToolRegistry([echo], options.hidden ? { maxTokens: 5, count: () => 10 } : undefined);
  if (options.hidden) {
    registry.setGroup('mcp', [
      defineTool({
        name: 'hidden',
        description: 'Not offered.',
        mode: 'inline',
        schema: z.object({ text: z.string() }),
        async run({ text }) {
          executed.push(`hidden ${text}`);
          return `hidden: ${text}`;
        },
      }),
    ]);
  }
  return {
    executed,
    registry,
    runs: {
      createRun: unused,
      findRun: unused,
      startRun: unused,
      saveProgress: unused,
      isCancelRequested: unused,
      requestCancel: unused,
      finishRun: unused,
      reportRun: unused,
      markSubmitted: unused,
      markHanded: unused,
      claimPoll: unused,
      markRemoteCancelled: unused,
      runsNeedingWork: unused,
      followUpNoteSeqs: async () => [],
      activeRunCounts: async () => ({ thread: 0, user: 0 }),
      followUpDepth: async () => options.depth ?? 1,
    } as unknown as ToolKit['runs'],
    queue: { enqueueToolRun: unused } as unknown as ToolKit['queue'],
    services: {} as ToolKit['services'],
    condense: {
      summarizer: { model: 's', summarize: unused },
      calls: { record: async () => undefined },
      inlineTokens: 800,
      inputMaxTokens: 2000,
    },
    maxRounds: options.maxRounds ?? 8,
    limits: { callsPerMessage: 8, followUps: options.followUps ?? 3, asyncRunsPerThread: 4, asyncRunsPerUser: 10 },
    inlineTimeoutMs: 5000,
    maxResultChars: 100_000,
  };
}

const assistantMessages = (memory: Awaited<ReturnType<typeof memoryTurnStore>>) =>
  memory.messages.filter((message) => message.role === 'assistant');

describe('TurnRunner on fakes', () => {
  it('streams the answer into one message, adds it to the window and records what the model was given', async () => {
    const { memory, runner, events, seen } = await setup([answer('Hello there.')]);
    const turn = await memory.send('hi');
    await runner.kick(memory.threadId);
    expect(assistantMessages(memory).map((message) => [message.content, message.status])).toEqual([
      ['Hello there.', 'complete'],
    ]);
    expect(memory.window.map((entry) => [entry.role, entry.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello there.'],
    ]);
    expect(memory.turns[0]).toMatchObject({ id: turn.id, status: 'complete' });
    expect(seen[0]?.messages.at(-1)).toMatchObject({ role: 'user', content: 'hi' });
    expect(memory.calls).toHaveLength(1);
    expect(events.map((event) => event.type)).toEqual([
      'message-created',
      'message-start',
      'message-delta',
      'message-end',
      'turn-end',
    ]);
  });

  it('recalls an older message out of the window that matches the new one into the prompt, and records it', async () => {
    const { memory, runner, seen } = await setup([answer('Noted.'), answer('Fine.'), answer('Ziggy.')], {
      recallTokens: 200,
    });
    await memory.send('my zebra is called Ziggy');
    await runner.kick(memory.threadId);
    await memory.send('unrelated chatter');
    await runner.kick(memory.threadId);
    expect(await memory.fold(2)).toMatchObject({ committed: true });
    await memory.send('what is my zebra called?');
    await runner.kick(memory.threadId);
    // The first exchange was folded out of the window: only recall brings its words back to the model.
    expect(memory.window.map((entry) => entry.seq)).toEqual([3, 4, 5, 6]);
    const prompt = seen[2]?.messages.map((message) => message.content).join('\n') ?? '';
    expect(prompt).toContain('my zebra is called Ziggy');
    expect(memory.calls.at(-1)?.recalledSeqs).toEqual([1]);
  });

  it('asks for a title once, after the first exchange has ended (its failure too), never for later turns', async () => {
    const answered = await setup([answer('one'), answer('two')]);
    await answered.memory.send('first');
    await answered.memory.send('second');
    await answered.runner.kick(answered.memory.threadId);
    expect(answered.titles).toEqual([{ threadId: answered.memory.threadId, turns: ['complete', 'running'] }]);

    const failed = await setup([fail('bad_request', false), answer('two')]);
    await failed.memory.send('first');
    await failed.runner.kick(failed.memory.threadId);
    await failed.memory.send('second');
    await failed.runner.kick(failed.memory.threadId);
    expect(failed.titles).toEqual([{ threadId: failed.memory.threadId, turns: ['error'] }]);
  });

  it('runs queued turns one after another, in order', async () => {
    const { memory, runner, seen } = await setup([answer('one'), answer('two')]);
    await memory.send('first');
    await memory.send('second');
    await runner.kick(memory.threadId);
    expect(assistantMessages(memory).map((message) => message.content)).toEqual(['one', 'two']);
    // The second call saw the first exchange.
    expect(seen[1]?.messages.map((message) => message.content)).toEqual(
      expect.arrayContaining(['first', 'one', 'second']),
    );
  });

  it("keeps a cancelled answer's partial text, marked cancelled, in the window", async () => {
    let started!: () => void;
    const streaming = new Promise<void>((resolve) => {
      started = resolve;
    });
    const { memory, runner } = await setup([scriptedText(['Partial ', reachedForever(started)])]);
    await memory.send('long story please');
    const running = runner.kick(memory.threadId);
    await streaming;
    expect(runner.cancel(memory.threadId)).toBe(true);
    await running;
    expect(assistantMessages(memory).map((message) => [message.content, message.status])).toEqual([
      ['Partial ', 'cancelled'],
    ]);
    expect(memory.turns[0]?.status).toBe('cancelled');
    expect(memory.window.at(-1)).toMatchObject({ role: 'assistant', content: 'Partial ' });
  });

  it("a cancel naming a turn stops only that turn: one that already ended leaves the thread's next turn running", async () => {
    let started!: () => void;
    const streaming = new Promise<void>((resolve) => {
      started = resolve;
    });
    let finish!: () => void;
    const held = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const { memory, runner } = await setup([
      answer('first answer'),
      scriptedText([
        'Second ',
        () => {
          started();
          return held;
        },
        'answer',
      ]),
    ]);
    const first = await memory.send('first');
    const second = await memory.send('second');
    const running = runner.kick(memory.threadId);
    await streaming;
    // The first request's client goes away after its turn ended: its cancel must not reach the second turn.
    expect(runner.cancel(memory.threadId, first.id)).toBe(false);
    finish();
    await running;
    expect(assistantMessages(memory).map((message) => [message.content, message.status])).toEqual([
      ['first answer', 'complete'],
      ['Second answer', 'complete'],
    ]);
    expect(memory.turns.find((turn) => turn.id === second.id)?.status).toBe('complete');
  });

  it('a cancel naming the running turn stops it', async () => {
    let started!: () => void;
    const streaming = new Promise<void>((resolve) => {
      started = resolve;
    });
    const { memory, runner } = await setup([scriptedText(['Partial ', reachedForever(started)])]);
    const turn = await memory.send('long story please');
    const running = runner.kick(memory.threadId);
    await streaming;
    expect(runner.cancel(memory.threadId, turn.id)).toBe(true);
    await running;
    expect(memory.turns[0]?.status).toBe('cancelled');
  });

  it('retries a retryable failure before the first token, recording the failed call', async () => {
    const { memory, runner, recorded, seen } = await setup([fail('server', true), answer('Recovered.')]);
    await memory.send('hello');
    await runner.kick(memory.threadId);
    expect(seen).toHaveLength(2);
    expect(assistantMessages(memory).map((message) => message.content)).toEqual(['Recovered.']);
    expect(recorded.map((call) => call.error !== null)).toEqual([true]);
    expect(memory.turns[0]?.status).toBe('complete');
  });

  it('never retries after the first token: the answer ends in error and stays out of the window', async () => {
    const { memory, runner, seen, events } = await setup([
      scriptedFailure('network', true, { chunks: ['Half an ans'], message: 'connection reset' }),
    ]);
    await memory.send('hello');
    await runner.kick(memory.threadId);
    expect(seen).toHaveLength(1);
    expect(assistantMessages(memory).map((message) => message.status)).toEqual(['error']);
    expect(memory.window.map((entry) => entry.role)).toEqual(['user']);
    expect(memory.turns[0]?.status).toBe('error');
    expect(events.some((event) => event.type === 'turn-error')).toBe(true);
  });

  it('folds once and retries on a context overflow, and gives up on a second one', async () => {
    const once = await setup([fail('context_overflow', false), answer('Fits now.')]);
    await once.memory.send('big');
    await once.runner.kick(once.memory.threadId);
    expect(once.foldNow).toEqual([once.memory.threadId]);
    expect(assistantMessages(once.memory).map((message) => message.content)).toEqual(['Fits now.']);

    const twice = await setup([fail('context_overflow', false), fail('context_overflow', false)]);
    await twice.memory.send('bigger');
    await twice.runner.kick(twice.memory.threadId);
    expect(twice.foldNow).toEqual([twice.memory.threadId]);
    expect(twice.memory.turns[0]?.status).toBe('error');
  });

  it('answers tool calls and calls the model again with their results, the same tools with tool_choice none after the last round', async () => {
    const tools = toolKit({ maxRounds: 1 });
    const { memory, runner, seen } = await setup([callTools('echo', 'echo'), answer('Both echoed.')], { tools });
    await memory.send('use the tool');
    await runner.kick(memory.threadId);
    expect(tools.executed).toEqual(['echo', 'echo']);
    expect(memory.messages.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual([
      'echo: echo',
      'echo: echo',
    ]);
    expect(seen[0]?.tools).toHaveLength(1);
    expect(seen[0]?.toolChoice).toBeUndefined();
    // The same schemas (the prompt's prefix stays the same for the provider's cache), but no call allowed.
    expect(seen[1]?.tools).toBe(seen[0]?.tools);
    expect(seen[1]?.toolChoice).toBe('none');
    // The second call's prompt extends the first's.
    expect(seen[1]?.messages.slice(0, seen[0]?.messages.length)).toEqual(seen[0]?.messages);
    expect(seen[1]?.messages.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual([
      'echo: echo',
      'echo: echo',
    ]);
    expect(assistantMessages(memory).at(-1)?.content).toBe('Both echoed.');
  });

  it('refuses a tool call the model makes when no tools were offered', async () => {
    const tools = toolKit({ maxRounds: 1 });
    const { memory, runner } = await setup([callTools('echo'), callTools('echo')], { tools });
    await memory.send('loop');
    await runner.kick(memory.threadId);
    expect(tools.executed).toEqual(['echo']);
    expect(memory.messages.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual([
      'echo: echo',
      expect.stringMatching(/^Not run: no tools are offered/),
    ]);
    expect(memory.turns[0]?.status).toBe('complete');
  });

  it('refuses a registered tool that was not offered with the answer (past TOOL_SCHEMA_MAX_TOKENS), running the offered one', async () => {
    const tools = toolKit({ hidden: true });
    const { memory, runner, seen } = await setup([callTools('hidden', 'echo'), answer('Done.')], { tools });
    await memory.send('use the hidden tool');
    await runner.kick(memory.threadId);
    expect((seen[0]?.tools as { function: { name: string } }[] | undefined)?.map((tool) => tool.function.name)).toEqual(
      ['echo'],
    );
    expect(tools.executed).toEqual(['echo']);
    expect(memory.messages.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual([
      'Not run: hidden is not one of the tools offered with this answer. Use only the tools you were given.',
      'echo: echo',
    ]);
    expect(memory.turns[0]?.status).toBe('complete');
  });

  it('answers a follow-up past MAX_TOOL_FOLLOW_UPS without tools, after a notice both sides read', async () => {
    const tools = toolKit({ followUps: 2, depth: 3 });
    const { memory, runner, seen } = await setup([answer('Done with what I have.')], { tools });
    await memory.followUp();
    await runner.kick(memory.threadId);
    expect(seen[0]?.tools).toHaveLength(1);
    expect(seen[0]?.toolChoice).toBe('none');
    const notice = memory.messages.find((message) => message.role === 'system');
    expect(notice?.content).toBe(toolChainNotice(2));
    expect(seen[0]?.messages.some((message) => message.content.includes(toolChainNotice(2)))).toBe(true);

    const within = await setup([answer('More tools allowed.')], { tools: toolKit({ followUps: 2, depth: 2 }) });
    await within.memory.followUp();
    await within.runner.kick(within.memory.threadId);
    expect(within.seen[0]?.tools).toHaveLength(1);
    expect(within.seen[0]?.toolChoice).toBeUndefined();
    expect(within.memory.messages.some((message) => message.role === 'system')).toBe(false);
  });
});
