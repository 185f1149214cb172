import { describe, expect, it } from 'vitest';
import type { ChatResult, ModelCallRecord, SummarizerPort } from '../ports';
import { foldThread } from './fold-thread';
import { codeSummarizer, memoryThread, silentLog, testSettings, transcriptOf } from '../../../test/fakes/summary-use-case-fakes';

function setup(summarizer: SummarizerPort = codeSummarizer()) {
  const thread = memoryThread({ transcript: transcriptOf(10), coveredThroughSeq: 0, summaryText: '', revision: 0 });
  /** What happened, in order: each record written and each event published. */
  const happened: string[] = [];
  const records: ModelCallRecord[] = [];
  const calls = { record: async (call: ModelCallRecord) => { records.push(call); happened.push(`record ${call.purpose}`); } };
  const events = { ...thread.eventBus, subscribeAll: () => () => undefined, publish: (event: Parameters<typeof thread.eventBus.publish>[0]) => { thread.eventBus.publish(event); happened.push(event.type); } };
  const settings = testSettings();
  // The fold only commits; the rest of the summary store is not its business.
  const summaries = { ...thread.summaries, recordFoldError: async () => undefined, listRevisions: async () => [], threadsNeedingFold: async () => [] };
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
    expect(records[0]).toMatchObject({ threadId: 'thread-1', messageId: null, purpose: 'summary', model: 'fake-summarizer', reportedPromptTokens: 100, reportedCompletionTokens: 10 });
    expect(records[0]!.estimatedPromptTokens).toBeGreaterThan(20);
  });

  it('still records the calls of a fold that fails after them', async () => {
    const summarizer = codeSummarizer();
    const { deps, happened } = setup(summarizer);
    deps.summaries.commit = async () => { throw new Error('database gone'); };
    await expect(foldThread({ threadId: 'thread-1' }, deps)).rejects.toThrow('database gone');
    expect(happened).toEqual(['record summary']);
  });
});

describe('foldThread: the summary as segments', () => {
  /** Writes what it was asked for: a segment names the new messages' codes, a consolidation every code it was given. */
  function segmentSummarizer(): SummarizerPort & { prompts: { system: string; user: string }[] } {
    const prompts: { system: string; user: string }[] = [];
    return {
      model: 'fake-summarizer', prompts,
      async summarize({ messages }): Promise<ChatResult> {
        const [system, user] = messages.map((message) => message.content);
        prompts.push({ system: system ?? '', user: user ?? '' });
        const asked = user ?? '';
        const material = asked.includes('New messages') ? asked.slice(asked.indexOf('New messages')) : asked;
        const codes = [...new Set(material.match(/CODE-\d+/g) ?? [])];
        const text = asked.startsWith('Consolidate') ? `Consolidated: ${codes[0]}…${codes.at(-1)}.` : `Segment: ${codes.join(', ')}.`;
        return { text, toolCalls: [], usage: { promptTokens: 100, completionTokens: 10 } };
      },
    };
  }

  function more(thread: ReturnType<typeof setup>['thread'], count: number): void {
    const from = thread.state.transcript.length + 1;
    for (let seq = from; seq < from + count; seq += 1) {
      thread.state.transcript.push({ seq, role: seq % 2 === 1 ? 'user' : 'assistant', content: `message ${seq} mentions CODE-${seq}`, tokens: 12 });
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
    expect(summarizer.prompts[1]?.user).toContain(`Earlier summary (read-only: it stays as it is, do not repeat it):\n${first}\nEnd of the earlier summary.`);
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

  it('uses the thread\'s own summary prompt for each segment and for the consolidation', async () => {
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
    expect(summarizer.prompts.every((prompt) => prompt.system.startsWith('Summarize for a lawyer in at most'))).toBe(true);
    expect(summarizer.prompts.some((prompt) => prompt.user.startsWith('Consolidate'))).toBe(true);
  });
});

describe('foldThread: an idle fold', () => {
  function quietThread() {
    // Three messages under a messages=4 trigger: no trigger fold is due; the keep policy (2) leaves one to fold.
    const thread = memoryThread({ transcript: transcriptOf(3), coveredThroughSeq: 0, summaryText: '', revision: 0 });
    const settings = testSettings();
    const summaries = { ...thread.summaries, recordFoldError: async () => undefined, listRevisions: async () => [], threadsNeedingFold: async () => [] };
    const events = { ...thread.eventBus, subscribeAll: () => () => undefined };
    const deps = { turns: thread.turns, summaries, events, summarizer: codeSummarizer(), calls: { record: async () => undefined }, settings, log: silentLog };
    return { thread, deps };
  }
  // memoryThread's last activity is at the epoch.
  const quietMs = 300_000;

  it('folds a thread quiet for longer than the cache lives, without a trigger, when enough lies beyond the keep policy', async () => {
    const { thread, deps } = quietThread();
    expect(await foldThread({ threadId: 'thread-1' }, deps)).toMatchObject({ status: 'skipped', reason: 'trigger not reached' });
    const outcome = await foldThread({ threadId: 'thread-1', idle: { quietMs, minTokens: 10, now: new Date(quietMs + 1) } }, deps);
    expect(outcome).toMatchObject({ status: 'folded', foldedEntries: 1, throughSeq: 1 });
    expect(thread.commits).toHaveLength(1);
  });

  it('waits while the thread was active within the cache lifetime, and says until when', async () => {
    const { thread, deps } = quietThread();
    const outcome = await foldThread({ threadId: 'thread-1', idle: { quietMs, minTokens: 10, now: new Date(quietMs - 5_000) } }, deps);
    expect(outcome).toEqual({ status: 'not-idle', at: new Date(quietMs) });
    expect(thread.commits).toHaveLength(0);
  });

  it('leaves a window that holds too little beyond the keep policy to be worth a fold', async () => {
    const { thread, deps } = quietThread();
    const outcome = await foldThread({ threadId: 'thread-1', idle: { quietMs, minTokens: 13, now: new Date(quietMs * 10) } }, deps);
    expect(outcome).toMatchObject({ status: 'skipped', reason: expect.stringContaining('12 tokens is not worth it') });
    expect(thread.commits).toHaveLength(0);
  });
});
