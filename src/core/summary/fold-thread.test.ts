import { describe, expect, it } from 'vitest';
import type { ModelCallRecord } from '../ports';
import { foldThread } from './fold-thread';
import { codeSummarizer, memoryThread, silentLog, testSettings, transcriptOf } from '../../../test/fakes/summary-use-case-fakes';

function setup(summarizer = codeSummarizer()) {
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
