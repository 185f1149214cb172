import { describe, expect, it } from 'vitest';
import { correctSummary } from './correct-summary';
import { memoryThread, testSettings, transcriptOf } from '../../../test/fakes/summary-use-case-fakes';

function setup(revision = 3) {
  const thread = memoryThread({
    transcript: transcriptOf(10),
    coveredThroughSeq: 6,
    summaryText: 'Summary by the fold.',
    revision,
  });
  return {
    thread,
    deps: { turns: thread.turns, summaries: thread.summaries, events: thread.eventBus, settings: testSettings() },
  };
}

describe('correctSummary', () => {
  it('commits the admin text as a revision with the current coverage and announces it', async () => {
    const { thread, deps } = setup();
    const result = await correctSummary(
      { threadId: 'thread-1', text: '  The user is Ada.  ', actorId: 'alice', expectedRevision: 3 },
      deps,
    );
    expect(result).toMatchObject({ revision: 4, fromSeq: 1, throughSeq: 6 });
    expect(thread.commits[0]).toMatchObject({
      author: 'admin',
      authorId: 'alice',
      text: 'The user is Ada.',
      fromSeq: 1,
      throughSeq: 6,
      foldedSeqs: [],
      model: null,
    });
    expect(thread.state.summaryText).toBe('The user is Ada.');
    expect(thread.events).toEqual([
      { type: 'summary-updated', threadId: 'thread-1', revision: 4, coveredThroughSeq: 6, tokens: result.tokens },
    ]);
  });

  it('refuses a stale edit, a summary moved by a concurrent fold, an empty text and one over the cap', async () => {
    const stale = setup();
    await expect(
      correctSummary({ threadId: 'thread-1', text: 'x', actorId: 'a', expectedRevision: 2 }, stale.deps),
    ).rejects.toMatchObject({ code: 'CONFLICT' });

    const raced = setup();
    raced.thread.setBeforeCommit(() => {
      raced.thread.state.version += 1;
      raced.thread.state.revision += 1;
      raced.thread.state.coveredThroughSeq = 8;
    });
    await expect(correctSummary({ threadId: 'thread-1', text: 'x', actorId: 'a' }, raced.deps)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect(raced.thread.commits).toEqual([]);

    const { deps } = setup();
    await expect(correctSummary({ threadId: 'thread-1', text: '   ', actorId: 'a' }, deps)).rejects.toMatchObject({
      code: 'VALIDATION',
    });
    await expect(
      correctSummary({ threadId: 'thread-1', text: 'word '.repeat(400), actorId: 'a' }, deps),
    ).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });

  it('refuses a thread without a summary', async () => {
    const { deps } = setup(0);
    await expect(correctSummary({ threadId: 'thread-1', text: 'x', actorId: 'a' }, deps)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });
});
