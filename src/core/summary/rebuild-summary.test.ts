import { describe, expect, it } from 'vitest';
import { rebuildSummary } from './rebuild-summary';
import {
  codeSummarizer,
  memoryThread,
  silentLog,
  testSettings,
  transcriptOf,
} from '../../../test/fakes/summary-use-case-fakes';

function setup(options: { coveredThroughSeq: number; revision: number; transcript?: number }) {
  const thread = memoryThread({
    transcript: transcriptOf(options.transcript ?? 10),
    coveredThroughSeq: options.coveredThroughSeq,
    summaryText: 'Old summary with CODE-999.',
    revision: options.revision,
  });
  const summarizer = codeSummarizer();
  const calls = { record: async () => undefined };
  const deps = {
    turns: thread.turns,
    transcript: thread.transcript,
    summaries: thread.summaries,
    events: thread.eventBus,
    summarizer,
    calls,
    settings: testSettings(),
    log: silentLog,
  };
  return { thread, summarizer, deps };
}

describe('rebuildSummary', () => {
  it('summarizes the transcript from the context start, without the old summary, as a rebuild revision', async () => {
    const { thread, summarizer, deps } = setup({ coveredThroughSeq: 6, revision: 3 });
    const outcome = await rebuildSummary({ threadId: 'thread-1', actorId: 'alice' }, deps);
    expect(outcome).toEqual({ status: 'rebuilt', revision: 4, fromSeq: 1, throughSeq: 6, entries: 6 });
    expect(summarizer.prompts[0]).not.toContain('CODE-999');
    const [commit] = thread.commits;
    expect(commit).toMatchObject({
      author: 'rebuild',
      authorId: 'alice',
      fromSeq: 1,
      throughSeq: 6,
      foldedSeqs: [],
      expectedVersion: 7,
      model: 'fake-summarizer',
    });
    expect(commit?.text).toBe('Summary keeps CODE-1, CODE-2, CODE-3, CODE-4, CODE-5, CODE-6.');
    expect(commit?.identifiersTotal).toBeGreaterThanOrEqual(6);
    expect(thread.events).toEqual([
      { type: 'summary-updated', threadId: 'thread-1', revision: 4, coveredThroughSeq: 6, tokens: commit?.tokens },
    ]);
  });

  it('summarizes what a fold covered meanwhile on top of the rebuilt text before committing again', async () => {
    const { thread, summarizer, deps } = setup({ coveredThroughSeq: 4, revision: 2 });
    // A fold commits seqs 5..8 while the rebuild is summarizing.
    thread.setBeforeCommit(() => {
      thread.state.version += 1;
      thread.state.revision += 1;
      thread.state.coveredThroughSeq = 8;
    });
    const outcome = await rebuildSummary({ threadId: 'thread-1', actorId: 'alice' }, deps);
    expect(outcome).toMatchObject({ status: 'rebuilt', throughSeq: 8, entries: 8 });
    expect(thread.commits).toHaveLength(1);
    expect(thread.commits[0]).toMatchObject({ fromSeq: 1, throughSeq: 8, expectedVersion: 8 });
    expect(thread.commits[0]?.text).toContain('CODE-8');
    // The catch-up call saw the rebuilt text and only the newly covered messages.
    const catchUp = summarizer.prompts.at(-1) ?? '';
    expect(catchUp).toContain('CODE-4');
    expect(catchUp).toContain('message 5 mentions');
    expect(catchUp).not.toContain('message 4 mentions');
  });

  it('skips a thread with nothing summarized yet', async () => {
    const { thread, deps } = setup({ coveredThroughSeq: 0, revision: 0 });
    expect(await rebuildSummary({ threadId: 'thread-1', actorId: 'alice' }, deps)).toEqual({
      status: 'skipped',
      reason: 'nothing is summarized yet',
    });
    expect(thread.commits).toEqual([]);
  });
});
