import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Thread } from '../../src/core/domain/types';
import type { Stores } from '../fakes';
import { ENCODING, exchange, newThread, pause, type MakeStores } from './store-fixtures';

/** An async tool call of an answer in the thread: its run (queued) and its transcript message (no seq, streaming). */
async function startRun(stores: Stores, thread: Thread, name = 'analyze') {
  const { answer } = await exchange(stores, thread.id, `run ${name}`);
  return stores.toolRuns.createRun({
    threadId: thread.id,
    messageId: answer.id,
    toolCallId: `call-${randomUUID()}`,
    name,
    args: { depth: 2 },
    startedAtSeq: answer.seq ?? 0,
  });
}

const report = (
  stores: Stores,
  runId: string,
  basedOn: { status: 'succeeded' | 'failed' | 'cancelled' | 'timed_out'; error: string | null },
) =>
  stores.toolRuns.reportRun({
    runId,
    transcriptText: `result of ${runId}`,
    transcriptTokens: 5,
    note: { content: `note of ${runId}`, tokens: 3 },
    encoding: ENCODING,
    basedOn,
  });

/**
 * The ToolRunStore contract (async tools, their worker and the sweeper): a run's lifecycle, the first outcome
 * standing, cancel, and the report that happens exactly once and shares one follow-up turn.
 */
export function describeToolRunStoreContract(name: string, make: MakeStores): void {
  describe(`ToolRunStore contract: ${name}`, () => {
    it('creates a queued run with a streaming message without seq; finds it for its owner only', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const { run, message } = await startRun(stores, thread);
      expect(run).toMatchObject({
        threadId: thread.id,
        name: 'analyze',
        args: { depth: 2 },
        status: 'queued',
        attempts: 0,
        cancelRequested: false,
        reportedAt: null,
      });
      expect(message).toMatchObject({
        threadId: thread.id,
        role: 'system',
        status: 'streaming',
        seq: null,
        toolRunId: run.id,
      });
      expect((await stores.toolRuns.findRun(run.id, thread.ownerId))?.id).toBe(run.id);
      expect((await stores.toolRuns.findRun(run.id, null))?.id).toBe(run.id);
      expect(await stores.toolRuns.findRun(run.id, 'someone-else')).toBeNull();
      expect(await stores.toolRuns.findRun('not-a-uuid', null)).toBeNull();
      expect(await stores.toolRuns.activeRunCounts({ threadId: thread.id, ownerId: thread.ownerId })).toEqual({
        thread: 1,
        user: 1,
      });
    });

    it('creates a run only within the caps it is given (thread, then user), refusing with AsyncRunCapReached', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const create = async (caps: { perThread: number; perUser: number }) => {
        const { answer } = await exchange(stores, thread.id, 'run capped');
        return stores.toolRuns.createRun({
          threadId: thread.id,
          messageId: answer.id,
          toolCallId: `call-${randomUUID()}`,
          name: 'analyze',
          args: {},
          startedAtSeq: answer.seq ?? 0,
          caps: { ownerId: thread.ownerId, ...caps },
        });
      };
      await create({ perThread: 2, perUser: 2 });
      await expect(create({ perThread: 1, perUser: 5 })).rejects.toMatchObject({
        name: 'AsyncRunCapReached',
        which: 'thread',
      });
      await expect(create({ perThread: 5, perUser: 1 })).rejects.toMatchObject({
        name: 'AsyncRunCapReached',
        which: 'user',
      });
      expect(await stores.toolRuns.activeRunCounts({ threadId: thread.id, ownerId: thread.ownerId })).toEqual({
        thread: 1,
        user: 1,
      });
    });

    it('starts a run (attempts counted, again after a crash), saves progress, and keeps the first outcome', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const { run } = await startRun(stores, thread);
      expect(await stores.toolRuns.startRun(run.id)).toMatchObject({ status: 'running', attempts: 1 });
      expect(await stores.toolRuns.startRun(run.id)).toMatchObject({ status: 'running', attempts: 2 });
      const progress = await stores.toolRuns.saveProgress({
        runId: run.id,
        progress: 0.5,
        note: 'half way',
        transcriptText: 'analyze: half way',
      });
      expect(progress).toMatchObject({ content: 'analyze: half way', status: 'streaming' });
      expect(await stores.toolRuns.findRun(run.id, null)).toMatchObject({ progress: 0.5, progressNote: 'half way' });
      const finished = await stores.toolRuns.finishRun({
        runId: run.id,
        status: 'succeeded',
        result: 'the result',
        resultTokens: 3,
        condensed: null,
        error: null,
      });
      expect(finished).toMatchObject({ status: 'succeeded', result: 'the result', progress: 1 });
      expect(
        await stores.toolRuns.finishRun({
          runId: run.id,
          status: 'failed',
          result: null,
          resultTokens: null,
          condensed: null,
          error: 'late',
        }),
      ).toBeNull();
      expect(await stores.toolRuns.startRun(run.id)).toBeNull();
      expect(await stores.toolRuns.findRun(run.id, null)).toMatchObject({ status: 'succeeded', error: null });
      expect(await stores.toolRuns.activeRunCounts({ threadId: thread.id, ownerId: thread.ownerId })).toEqual({
        thread: 0,
        user: 0,
      });
    });

    it('cancels a queued run at once and flags a running one for its worker; a finished run cannot be cancelled', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const queued = await startRun(stores, thread, 'first');
      expect(await stores.toolRuns.requestCancel(queued.run.id)).toMatchObject({
        status: 'cancelled',
        cancelRequested: true,
      });
      const running = await startRun(stores, thread, 'second');
      await stores.toolRuns.startRun(running.run.id);
      expect(await stores.toolRuns.isCancelRequested(running.run.id)).toBe(false);
      expect(await stores.toolRuns.requestCancel(running.run.id)).toMatchObject({
        status: 'running',
        cancelRequested: true,
      });
      expect(await stores.toolRuns.isCancelRequested(running.run.id)).toBe(true);
      expect(await stores.toolRuns.requestCancel(queued.run.id)).toBeNull();
    });

    it('reports a finished run exactly once, at the next seq with its note in the window; results landing together share one follow-up', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const first = await startRun(stores, thread, 'first');
      const second = await startRun(stores, thread, 'second');
      for (const { run } of [first, second]) {
        await stores.toolRuns.startRun(run.id);
        await stores.toolRuns.finishRun({
          runId: run.id,
          status: 'succeeded',
          result: 'done',
          resultTokens: 1,
          condensed: null,
          error: null,
        });
      }
      // Written from an outcome the run does not have (a forget replaced it): nothing.
      expect(await report(stores, first.run.id, { status: 'failed', error: 'stale' })).toEqual({ reported: false });
      const reported = await report(stores, first.run.id, { status: 'succeeded', error: null });
      if (!reported.reported) throw new Error('not reported');
      expect(reported.message).toMatchObject({
        id: first.message.id,
        seq: 5,
        status: 'complete',
        content: `result of ${first.run.id}`,
      });
      expect(reported.followUp).toMatchObject({
        threadId: thread.id,
        kind: 'follow-up',
        status: 'queued',
        userMessageId: null,
      });
      expect(reported.followUpCreated).toBe(true);
      expect(await report(stores, first.run.id, { status: 'succeeded', error: null })).toEqual({ reported: false });

      const together = await report(stores, second.run.id, { status: 'succeeded', error: null });
      expect(together).toMatchObject({
        reported: true,
        followUpCreated: false,
        followUp: { id: reported.followUp.id },
        message: { seq: 6 },
      });
      expect(await stores.toolRuns.followUpNoteSeqs(reported.followUp.id)).toEqual([5, 6]);
      const context = await stores.turns.loadContext(thread.id);
      expect(context?.window.slice(-2).map((entry) => [entry.seq, entry.role, entry.content])).toEqual([
        [5, 'system', `note of ${first.run.id}`],
        [6, 'system', `note of ${second.run.id}`],
      ]);
      expect((await stores.toolRuns.findRun(first.run.id, null))?.reportedAt).toBeInstanceOf(Date);
      expect(await stores.toolRuns.followUpDepth(reported.followUp.id)).toBe(1);
    });

    it('claims polls of submitted work at most once per interval, and hands unreported finished runs to the sweeper', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const { run } = await startRun(stores, thread);
      await stores.toolRuns.startRun(run.id);
      expect(await stores.toolRuns.markSubmitted({ runId: run.id, taskId: 'task-1', timeoutMs: 60_000 })).toBe(true);
      expect(await stores.toolRuns.markSubmitted({ runId: run.id, taskId: 'task-2', timeoutMs: 60_000 })).toBe(false);
      // Stored before the other side hears of it: not handed until it answered, then once.
      expect((await stores.toolRuns.findRun(run.id, null))?.handedAt).toBeNull();
      await stores.toolRuns.markHanded(run.id);
      const handedAt = (await stores.toolRuns.findRun(run.id, null))?.handedAt;
      expect(handedAt).toBeInstanceOf(Date);
      await pause(5);
      await stores.toolRuns.markHanded(run.id);
      expect((await stores.toolRuns.findRun(run.id, null))?.handedAt).toEqual(handedAt);
      expect(await stores.toolRuns.claimPoll({ runId: run.id, minIntervalMs: 60_000 })).toEqual({
        claimed: false,
        overdue: false,
      });
      expect(await stores.toolRuns.claimPoll({ runId: run.id, minIntervalMs: 0 })).toEqual({
        claimed: true,
        overdue: false,
      });

      await stores.toolRuns.finishRun({
        runId: run.id,
        status: 'failed',
        result: null,
        resultTokens: null,
        condensed: null,
        error: 'the runner failed',
      });
      await pause(30);
      expect(await stores.toolRuns.runsNeedingWork({ limit: 100_000, olderThanMs: 10 })).toContain(run.id);
      await report(stores, run.id, { status: 'failed', error: 'the runner failed' });
      expect(await stores.toolRuns.runsNeedingWork({ limit: 100_000, olderThanMs: 10 })).not.toContain(run.id);
    });
  });
}
