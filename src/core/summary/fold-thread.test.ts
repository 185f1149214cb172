import { describe, expect, it } from 'vitest';
import type { ChatResult, ModelCallRecord, SummarizerPort } from '../ports';
import { foldThread } from './fold-thread';
import { FOLD_TASK_OPENING } from './continued-fold-prompt';
import { ModelCallError } from '../errors/model-call-error';
import { packBudget } from '../thread-context/context-settings';
import type { ThreadContext } from '../domain/types';
import {
  codeSummarizer,
  memoryThread,
  silentLog,
  testSettings,
  transcriptOf,
} from '../../../test/fakes/summary-use-case-fakes';

function setup(summarizer: SummarizerPort = codeSummarizer()) {
  const thread = memoryThread({ transcript: transcriptOf(10), coveredThroughSeq: 0, summaryText: '', revision: 0 });
  /** What happened, in order: each record written and each event published. */
  const happened: string[] = [];
  const records: ModelCallRecord[] = [];
  const calls = {
    record: async (call: ModelCallRecord) => {
      records.push(call);
      happened.push(`record ${call.purpose}`);
    },
  };
  const events = {
    ...thread.eventBus,
    subscribeAll: () => () => undefined,
    publish: (event: Parameters<typeof thread.eventBus.publish>[0]) => {
      thread.eventBus.publish(event);
      happened.push(event.type);
    },
  };
  const settings = testSettings();
  // The fold only commits; the rest of the summary store is not its business.
  const summaries = {
    ...thread.summaries,
    recordFoldError: async () => undefined,
    listRevisions: async () => [],
    threadsNeedingFold: async () => [],
  };
  const deps = { turns: thread.turns, summaries, events, summarizer, calls, settings, log: silentLog };
  return { thread, deps, happened, records, settings };
}

describe('foldThread', () => {
  it('announces the summary first and records its summarizer call before it returns, with the prompt estimate', async () => {
    const { thread, deps, happened, records, settings } = setup();
    const outcome = await foldThread({ threadId: 'thread-1' }, deps);
    expect(outcome).toMatchObject({ status: 'folded', revision: 1, throughSeq: 8 });
    expect(happened).toEqual(['summary-updated', 'record summary']);
    expect(thread.commits[0]).toMatchObject({ tokensIn: 100, tokensOut: 10, identifiersKept: 8, identifiersTotal: 8 });
    expect(thread.commits[0]?.tokens).toBe(settings.counter.countText(thread.commits[0]!.text));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      threadId: 'thread-1',
      messageId: null,
      purpose: 'summary',
      model: 'fake-summarizer',
      reportedPromptTokens: 100,
      reportedCompletionTokens: 10,
    });
    expect(records[0]!.estimatedPromptTokens).toBeGreaterThan(20);
  });

  it('re-plans and commits once on the thread as it is after losing a compare-and-set race', async () => {
    const { thread, deps, happened, records } = setup();
    // A turn ends between the fold's read and its commit: two more messages, and the version moves on.
    thread.setBeforeCommit(() => {
      thread.state.transcript = transcriptOf(12);
      thread.state.version += 1;
    });
    const outcome = await foldThread({ threadId: 'thread-1' }, deps);
    // The second plan folds through #10 (the keep policy keeps the two newest of twelve), not the first plan's #8.
    expect(outcome).toMatchObject({ status: 'folded', revision: 1, throughSeq: 10 });
    expect(thread.commits).toHaveLength(1);
    expect(thread.commits[0]).toMatchObject({ expectedVersion: 8, fromSeq: 1, throughSeq: 10 });
    expect(thread.commits[0]?.foldedSeqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // One announcement, of the commit that landed; both attempts' summarizer calls are recorded (both were paid for).
    expect(happened).toEqual(['summary-updated', 'record summary', 'record summary']);
    expect(thread.events).toEqual([
      expect.objectContaining({ type: 'summary-updated', revision: 1, coveredThroughSeq: 10 }),
    ]);
    expect(records).toHaveLength(2);
  });

  it('still records the calls of a fold that fails after them', async () => {
    const summarizer = codeSummarizer();
    const { deps, happened } = setup(summarizer);
    deps.summaries.commit = async () => {
      throw new Error('database gone');
    };
    await expect(foldThread({ threadId: 'thread-1' }, deps)).rejects.toThrow('database gone');
    expect(happened).toEqual(['record summary']);
  });
});

describe('foldThread: the summary as segments', () => {
  /** Writes what it was asked for: a segment names the new messages' codes, a consolidation every code it was given. */
  function segmentSummarizer(): SummarizerPort & { prompts: { system: string; user: string }[] } {
    const prompts: { system: string; user: string }[] = [];
    return {
      model: 'fake-summarizer',
      prompts,
      async summarize({ messages }): Promise<ChatResult> {
        const [system, user] = messages.map((message) => message.content);
        prompts.push({ system: system ?? '', user: user ?? '' });
        const asked = user ?? '';
        const material = asked.includes('New messages') ? asked.slice(asked.indexOf('New messages')) : asked;
        const codes = [...new Set(material.match(/CODE-\d+/g) ?? [])];
        const text = asked.startsWith('Consolidate')
          ? `Consolidated: ${codes[0]}…${codes.at(-1)}.`
          : `Segment: ${codes.join(', ')}.`;
        return { text, toolCalls: [], usage: { promptTokens: 100, completionTokens: 10 } };
      },
    };
  }

  function more(thread: ReturnType<typeof setup>['thread'], count: number): void {
    const from = thread.state.transcript.length + 1;
    for (let seq = from; seq < from + count; seq += 1) {
      thread.state.transcript.push({
        seq,
        role: seq % 2 === 1 ? 'user' : 'assistant',
        content: `message ${seq} mentions CODE-${seq}`,
        tokens: 12,
      });
    }
  }

  it('appends a segment per fold and leaves the earlier segments byte-identical', async () => {
    const summarizer = segmentSummarizer();
    const { thread, deps } = setup(summarizer);
    await foldThread({ threadId: 'thread-1' }, deps);
    const first = thread.state.summaryText;
    expect(first).toBe('Segment: CODE-1, CODE-2, CODE-3, CODE-4, CODE-5, CODE-6, CODE-7, CODE-8.');
    more(thread, 6);
    await foldThread({ threadId: 'thread-1' }, deps);
    expect(thread.state.summaryText).toBe(`${first}\n\nSegment: CODE-9, CODE-10, CODE-11, CODE-12, CODE-13, CODE-14.`);
    expect(thread.commits[1]?.segmentEnds).toEqual([first.length, thread.state.summaryText.length]);
    expect(thread.commits[1]).toMatchObject({ fromSeq: 9, throughSeq: 14, identifiersKept: 6, identifiersTotal: 6 });
    // The earlier summary reached the summarizer as read-only context, the new messages as the material.
    expect(summarizer.prompts[1]?.user).toContain(
      `Earlier summary (read-only: it stays as it is, do not repeat it):\n${first}\nEnd of the earlier summary.`,
    );
  });

  it('consolidates once the segments outgrow the cap: the only commit that rewrites the earlier text', async () => {
    const summarizer = segmentSummarizer();
    const { thread, deps, settings } = setup(summarizer);
    settings.summaryMaxTokens = 100;
    await foldThread({ threadId: 'thread-1' }, deps);
    const texts = [thread.state.summaryText];
    for (let fold = 0; fold < 4; fold += 1) {
      more(thread, 6);
      await foldThread({ threadId: 'thread-1' }, deps);
      texts.push(thread.state.summaryText);
    }
    const rewrites = texts.slice(1).filter((text, index) => !text.startsWith(texts[index] ?? ''));
    expect(rewrites).toHaveLength(1);
    expect(rewrites[0]).toBe('Consolidated: CODE-1…CODE-26.');
    expect(thread.commits.at(-1)?.segmentEnds).toHaveLength(2);
    expect(thread.commits.every((commit) => settings.counter.countText(commit.text) <= 100)).toBe(true);
    const consolidation = summarizer.prompts.find((prompt) => prompt.user.startsWith('Consolidate'));
    expect(consolidation?.user).toContain('at most 50 tokens');
  });

  it("uses the thread's own summary prompt for each segment and for the consolidation", async () => {
    const summarizer = segmentSummarizer();
    const { thread, deps, settings } = setup(summarizer);
    thread.state.summaryPrompt = 'Summarize for a lawyer in at most {{maxTokens}} tokens.';
    settings.summaryMaxTokens = 60;
    await foldThread({ threadId: 'thread-1' }, deps);
    for (let fold = 0; fold < 4; fold += 1) {
      more(thread, 6);
      await foldThread({ threadId: 'thread-1' }, deps);
    }
    expect(summarizer.prompts.length).toBeGreaterThan(5);
    expect(summarizer.prompts.every((prompt) => prompt.system.startsWith('Summarize for a lawyer in at most'))).toBe(
      true,
    );
    expect(summarizer.prompts.some((prompt) => prompt.user.startsWith('Consolidate'))).toBe(true);
  });
});

describe('foldThread: an idle fold', () => {
  function quietThread() {
    // Three messages under a messages=4 trigger: no trigger fold is due; the keep policy (2) leaves one to fold.
    const thread = memoryThread({ transcript: transcriptOf(3), coveredThroughSeq: 0, summaryText: '', revision: 0 });
    const settings = testSettings();
    const summaries = {
      ...thread.summaries,
      recordFoldError: async () => undefined,
      listRevisions: async () => [],
      threadsNeedingFold: async () => [],
    };
    const events = { ...thread.eventBus, subscribeAll: () => () => undefined };
    const deps = {
      turns: thread.turns,
      summaries,
      events,
      summarizer: codeSummarizer(),
      calls: { record: async () => undefined },
      settings,
      log: silentLog,
    };
    return { thread, deps };
  }
  // memoryThread's last activity is at the epoch.
  const quietMs = 300_000;

  it('folds a thread quiet for longer than the cache lives, without a trigger, when enough lies beyond the keep policy', async () => {
    const { thread, deps } = quietThread();
    expect(await foldThread({ threadId: 'thread-1' }, deps)).toMatchObject({
      status: 'skipped',
      reason: 'trigger not reached',
    });
    const outcome = await foldThread(
      { threadId: 'thread-1', idle: { quietMs, minTokens: 10, now: new Date(quietMs + 1) } },
      deps,
    );
    expect(outcome).toMatchObject({ status: 'folded', foldedEntries: 1, throughSeq: 1 });
    expect(thread.commits).toHaveLength(1);
  });

  it('waits while the thread was active within the cache lifetime, and says until when', async () => {
    const { thread, deps } = quietThread();
    const outcome = await foldThread(
      { threadId: 'thread-1', idle: { quietMs, minTokens: 10, now: new Date(quietMs - 5_000) } },
      deps,
    );
    expect(outcome).toEqual({ status: 'not-idle', at: new Date(quietMs) });
    expect(thread.commits).toHaveLength(0);
  });

  it('leaves a window that holds too little beyond the keep policy to be worth a fold', async () => {
    const { thread, deps } = quietThread();
    const outcome = await foldThread(
      { threadId: 'thread-1', idle: { quietMs, minTokens: 13, now: new Date(quietMs * 10) } },
      deps,
    );
    expect(outcome).toMatchObject({ status: 'skipped', reason: expect.stringContaining('12 tokens is not worth it') });
    expect(thread.commits).toHaveLength(0);
  });
});

describe('foldThread: a fold that continues the chat prompt', () => {
  const tool = {
    type: 'function' as const,
    function: { name: 'search_transcript', description: 'search', parameters: { type: 'object', properties: {} } },
  };
  /** Answers with the codes of the messages its task names (by their range), and keeps what it was sent. */
  function continuingSummarizer(): SummarizerPort & { asked: Parameters<SummarizerPort['summarize']>[0][] } {
    const asked: Parameters<SummarizerPort['summarize']>[0][] = [];
    return {
      model: 'fake-summarizer',
      asked,
      async summarize(input): Promise<ChatResult> {
        asked.push(input);
        const task = input.messages.at(-1)?.content ?? '';
        const range = /The messages to fold \(#(\d+) to #(\d+)\)/.exec(task);
        const seqs = range
          ? Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, index) => Number(range[1]) + index)
          : [];
        const listed = task.startsWith(FOLD_TASK_OPENING)
          ? seqs.map((seq) => `CODE-${seq}`)
          : (task.match(/CODE-\d+/g) ?? []);
        return {
          text: `Segment: ${[...new Set(listed)].join(', ')}.`,
          toolCalls: [],
          usage: { promptTokens: 100, completionTokens: 10, cachedTokens: 90 },
        };
      },
    };
  }
  function withPrefix(summarizer: SummarizerPort) {
    const setupResult = setup(summarizer);
    setupResult.thread.state.transcript.forEach((entry) => {
      entry.content = `message ${entry.seq} mentions CODE-${entry.seq}`;
    });
    const chatPrefix = (context: ThreadContext) => ({
      messages: [
        { role: 'system' as const, content: 'system', tokens: 5 },
        ...context.window.map((entry) => ({
          role: entry.role,
          content: entry.content,
          seq: entry.seq,
          tokens: entry.tokens,
        })),
      ],
      tools: [tool],
      tokens: 300,
    });
    return { ...setupResult, deps: { ...setupResult.deps, chatPrefix } };
  }

  it('sends the chat prefix, the task and the same tools with tool_choice none and the thread as cache key', async () => {
    const summarizer = continuingSummarizer();
    const { thread, deps } = withPrefix(summarizer);
    const outcome = await foldThread({ threadId: 'thread-1' }, deps);
    expect(outcome).toMatchObject({ status: 'folded', throughSeq: 8 });
    const [call] = summarizer.asked;
    expect(call?.tools).toEqual([tool]);
    expect(call?.toolChoice).toBe('none');
    expect(call?.cacheKey).toBe('thread-1');
    // The whole window as the chat sends it (the kept #9 and #10 too), then the task listing #1 to #8.
    expect(call?.messages.map((message) => message.seq)).toEqual([undefined, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, undefined]);
    expect(call?.messages.at(-1)?.content).toContain('The messages to fold (#1 to #8)');
    expect(thread.state.summaryText).toBe('Segment: CODE-1, CODE-2, CODE-3, CODE-4, CODE-5, CODE-6, CODE-7, CODE-8.');
    expect(thread.commits[0]).toMatchObject({ identifiersKept: 8, identifiersTotal: 8 });
  });

  it('asks once more with the stand-alone prompt when the continued one gets no usable summary or is refused', async () => {
    for (const failure of [
      async (): Promise<ChatResult> => ({
        text: '',
        toolCalls: [{ id: 'c1', name: 'search_transcript', args: {} }],
        usage: null,
      }),
      async (): Promise<ChatResult> => {
        throw new ModelCallError({
          kind: 'bad_request',
          message: 'tool_choice none is not supported',
          retryable: false,
        });
      },
    ]) {
      const summarizer = continuingSummarizer();
      const answer = summarizer.summarize.bind(summarizer);
      summarizer.summarize = async (input) => (input.tools ? (summarizer.asked.push(input), failure()) : answer(input));
      const { thread, deps } = withPrefix(summarizer);
      expect(await foldThread({ threadId: 'thread-1' }, deps)).toMatchObject({ status: 'folded', throughSeq: 8 });
      expect(summarizer.asked.map((call) => call.tools !== undefined)).toEqual([true, false]);
      expect(thread.state.summaryText).toContain('CODE-8');
    }
    // Any other failure is the fold's (retried by its job), not a reason to send a second prompt.
    const summarizer = continuingSummarizer();
    summarizer.summarize = async () => {
      throw new ModelCallError({ kind: 'server', message: 'overloaded', retryable: true });
    };
    const { deps } = withPrefix(summarizer);
    await expect(foldThread({ threadId: 'thread-1' }, deps)).rejects.toThrow('overloaded');
  });

  it('stays stand-alone for an idle fold, an overflow fold, and a prefix over the budget', async () => {
    for (const input of [
      { threadId: 'thread-1', idle: { quietMs: 1, minTokens: 1, now: new Date(1_000) } },
      { threadId: 'thread-1', author: 'overflow-fallback' as const, force: true },
    ]) {
      const summarizer = continuingSummarizer();
      const { deps } = withPrefix(summarizer);
      await foldThread(input, deps);
      expect(summarizer.asked[0]?.tools).toBeUndefined();
      expect(summarizer.asked[0]?.messages[0]?.content).toContain('running summary');
    }
    const summarizer = continuingSummarizer();
    const { deps, settings } = withPrefix(summarizer);
    await foldThread(
      { threadId: 'thread-1' },
      { ...deps, chatPrefix: (context) => ({ ...deps.chatPrefix(context), tokens: packBudget(settings) }) },
    );
    expect(summarizer.asked[0]?.tools).toBeUndefined();
  });
});
