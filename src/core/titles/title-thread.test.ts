import { describe, expect, it } from 'vitest';
import { createMemoryEventBus } from '../../../test/fakes/memory-event-bus';
import { createScriptedChatModel, scriptedText } from '../../../test/fakes/scripted-chat-model';
import { silentLog, testSettings } from '../../../test/fakes/summary-use-case-fakes';
import type { Thread } from '../domain/types';
import type { FirstExchange, ModelCallRecord, SummarizerPort, ThreadTitleStore } from '../ports';
import { titleThread, type TitleDeps } from './title-thread';

/** A thread store of one thread: its first exchange while the title is the default one; the conditional write. */
function oneThread(exchange: Partial<FirstExchange> = {}) {
  const thread = {
    id: 'thread-1',
    title: 'New chat',
    source: 'default' as 'default' | 'auto' | 'user',
  };
  const titles: ThreadTitleStore = {
    async firstExchange() {
      if (thread.source !== 'default') return null;
      return {
        userText: 'plan a team offsite in Lisbon next spring',
        answerText: 'Sure.',
        branch: false,
        openaiClient: false,
        ...exchange,
      };
    },
    async setAutomaticTitle(_threadId, title) {
      if (thread.source !== 'default') return null;
      thread.title = title;
      thread.source = 'auto';
      const now = new Date();
      return {
        id: thread.id,
        ownerId: 'user-1',
        title,
        createdAt: now,
        updatedAt: now,
        lastActivityAt: now,
        lastSeq: 2,
        summary: null,
        summaryEncoding: null,
        contextStartSeq: 1,
        memoryMode: 'summary',
        settings: {},
        version: 0,
        lastFoldAt: null,
        lastFoldError: null,
        forkedFrom: null,
      } satisfies Thread;
    },
  };
  return { thread, titles };
}

/** A summarizer answering `answer` (or failing with it) to every call; `prompts()`: the text each call was given. */
function model(answer: string | Error) {
  const summarizer = createScriptedChatModel({
    model: 'small-model',
    fallback:
      answer instanceof Error
        ? { error: answer }
        : scriptedText([answer], { usage: { promptTokens: 80, completionTokens: 5 } }),
  });
  const prompts = () => summarizer.calls.map((call) => call.messages.map((message) => message.content).join('\n'));
  return Object.assign(summarizer, { prompts });
}

function depsOf(titles: ThreadTitleStore, summarizer: SummarizerPort | null) {
  const records: ModelCallRecord[] = [];
  const events = createMemoryEventBus();
  const deps: TitleDeps = {
    titles,
    model: summarizer,
    calls: { record: async (call) => void records.push(call) },
    events,
    settings: testSettings(),
    log: silentLog,
  };
  return { deps, records, events };
}

describe('titleThread', () => {
  it('offline: titles the thread from the first message’s words, announces it, and calls no model', async () => {
    const { thread, titles } = oneThread();
    const { deps, records, events } = depsOf(titles, null);
    expect(await titleThread({ threadId: 'thread-1' }, deps)).toEqual({
      status: 'titled',
      title: 'Plan a team offsite in Lisbon',
      by: 'words',
    });
    expect(thread.title).toBe('Plan a team offsite in Lisbon');
    expect(records).toEqual([]);
    expect(events.published).toEqual([
      expect.objectContaining({
        type: 'thread-updated',
        threadId: 'thread-1',
        thread: expect.objectContaining({ title: 'Plan a team offsite in Lisbon' }),
      }),
    ]);
  });

  it('with a model: asks it with the first exchange, cleans its answer, and records the call with purpose title', async () => {
    const { thread, titles } = oneThread();
    const summarizer = model('Title: "Lisbon team offsite."');
    const { deps, records } = depsOf(titles, summarizer);
    expect(await titleThread({ threadId: 'thread-1' }, deps)).toMatchObject({
      title: 'Lisbon team offsite',
      by: 'model',
    });
    expect(thread.title).toBe('Lisbon team offsite');
    expect(summarizer.prompts()[0]).toContain('plan a team offsite in Lisbon next spring');
    expect(summarizer.prompts()[0]).toContain('Sure.');
    expect(records).toEqual([
      expect.objectContaining({
        threadId: 'thread-1',
        messageId: null,
        purpose: 'title',
        model: 'small-model',
        reportedPromptTokens: 80,
        reportedCompletionTokens: 5,
        error: null,
      }),
    ]);
    expect(records[0]!.estimatedPromptTokens).toBeGreaterThan(0);
  });

  it('never overwrites a title set before it: no model call, no write, no event', async () => {
    const { thread, titles } = oneThread();
    thread.title = 'My rename';
    thread.source = 'user';
    const summarizer = model('Something else');
    const { deps, records, events } = depsOf(titles, summarizer);
    expect(await titleThread({ threadId: 'thread-1' }, deps)).toMatchObject({ status: 'skipped' });
    expect(thread.title).toBe('My rename');
    expect(summarizer.prompts()).toEqual([]);
    expect(records).toEqual([]);
    expect(events.published).toEqual([]);
  });

  it('a rename while the model answers wins (the write is conditional)', async () => {
    const { thread, titles } = oneThread();
    const summarizer: SummarizerPort = {
      model: 'small-model',
      async summarize() {
        thread.title = 'Renamed meanwhile';
        thread.source = 'user';
        return { text: 'Lisbon offsite', toolCalls: [], usage: null };
      },
    };
    const { deps, events } = depsOf(titles, summarizer);
    expect(await titleThread({ threadId: 'thread-1' }, deps)).toEqual({
      status: 'skipped',
      reason: 'titled meanwhile',
    });
    expect(thread.title).toBe('Renamed meanwhile');
    expect(events.published).toEqual([]);
  });

  it('a model failure throws for a retry, records the failed call, and on the last attempt falls back to the words', async () => {
    const { thread, titles } = oneThread();
    const { deps, records } = depsOf(titles, model(new Error('upstream 503')));
    await expect(titleThread({ threadId: 'thread-1' }, deps)).rejects.toThrow('upstream 503');
    expect(thread.title).toBe('New chat');
    expect(records[0]).toMatchObject({ purpose: 'title', error: 'upstream 503' });
    expect(await titleThread({ threadId: 'thread-1', lastAttempt: true }, deps)).toMatchObject({ by: 'words' });
    expect(thread.title).toBe('Plan a team offsite in Lisbon');
  });

  it('an answer without a title falls back to the words; a branch is marked; an OpenAI client’s thread costs no call', async () => {
    const empty = oneThread();
    await titleThread({ threadId: 'thread-1' }, depsOf(empty.titles, model('""')).deps);
    expect(empty.thread.title).toBe('Plan a team offsite in Lisbon');

    const branch = oneThread({ branch: true });
    await titleThread({ threadId: 'thread-1' }, depsOf(branch.titles, model('Lisbon offsite')).deps);
    expect(branch.thread.title).toBe('Lisbon offsite (branch)');

    const client = oneThread({ openaiClient: true });
    const summarizer = model('Lisbon offsite');
    const { deps, records } = depsOf(client.titles, summarizer);
    await titleThread({ threadId: 'thread-1' }, deps);
    expect(client.thread.title).toBe('Plan a team offsite in Lisbon');
    expect(summarizer.prompts()).toEqual([]);
    expect(records).toEqual([]);
  });

  it('skips a first message without words', async () => {
    const { thread, titles } = oneThread({ userText: '```\n```' });
    const { deps } = depsOf(titles, null);
    expect(await titleThread({ threadId: 'thread-1' }, deps)).toMatchObject({ status: 'skipped' });
    expect(thread.title).toBe('New chat');
  });
});
