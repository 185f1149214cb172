import { describe, expect, it } from 'vitest';
import { createMemoryStores } from '../../../test/fakes';
import { exchange, newThread } from '../../../test/contracts/store-fixtures';
import type { ToolRun, ToolRunStore } from '../ports';
import { silentLog } from '../../../test/fakes/summary-use-case-fakes';
import type { ToolOutcome } from './execute-tool';
import { runBackgroundTool } from './run-background-tool';
import type { BackgroundContext, BackgroundWork } from './types';

/** A process dying: nothing after the throw runs. */
class Crash extends Error {}

/** A runner that dedups by idempotency key, as the runner protocol asks: one run per key, however often it is sent. */
function runnerWork() {
  const requests: { key: string; runId: string }[] = [];
  const started = new Set<string>();
  const work: BackgroundWork = {
    pollIntervalMs: 1000,
    presetTaskId: (runId) => runId,
    async submit(_args, context: BackgroundContext) {
      requests.push({ key: context.runId, runId: context.runId });
      started.add(context.runId);
      return { taskId: context.runId };
    },
    async cancel() {
      /* not asked here */
    },
  };
  return { work, requests, started };
}

async function setUp() {
  const stores = createMemoryStores();
  const thread = await newThread(stores);
  const { answer } = await exchange(stores, thread.id, 'render');
  const { run } = await stores.toolRuns.createRun({
    threadId: thread.id,
    messageId: answer.id,
    toolCallId: 'call-1',
    name: 'render_video',
    args: { scene: 'dawn' },
    startedAtSeq: answer.seq ?? 0,
  });
  const finished: ToolOutcome[] = [];
  const depsOf = (runs: ToolRunStore) => ({
    runs,
    events: { publish: () => undefined, subscribe: () => () => undefined, subscribeAll: () => () => undefined },
    log: silentLog,
    timeoutMs: 60_000,
    schedulePoll: async () => undefined,
    timeoutFor: () => 60_000,
    finish: async (_run: ToolRun, outcome: ToolOutcome) => {
      finished.push(outcome);
      return 'reported' as const;
    },
    start: (runId: string) => runs.startRun(runId),
  });
  return { stores, run, finished, depsOf };
}

describe('runBackgroundTool with a preset task id (external runners)', () => {
  it('stores the task id and the deadline before the runner hears of the run, and is handed once the runner answered', async () => {
    const { stores, run, depsOf } = await setUp();
    const { work, requests } = runnerWork();
    const seenAtRequest: (ToolRun | null)[] = [];
    const watching: BackgroundWork = {
      ...work,
      submit: async (args, context) => {
        seenAtRequest.push(await stores.toolRuns.findRun(run.id, null));
        return work.submit(args, context);
      },
    };
    expect(await runBackgroundTool(run, watching, depsOf(stores.toolRuns))).toBe('submitted');
    // When the runner got the request (and could report at once), its run already had its task id and deadline.
    expect(seenAtRequest[0]).toMatchObject({ taskId: run.id, handedAt: null });
    expect(seenAtRequest[0]?.deadlineAt).toBeInstanceOf(Date);
    expect(requests).toHaveLength(1);
    expect((await stores.toolRuns.findRun(run.id, null))?.handedAt).toBeInstanceOf(Date);
  });

  it('a worker dying after the request, before storing its answer, sends it again with the same key: the run happens once', async () => {
    const { stores, run, finished, depsOf } = await setUp();
    const { work, requests, started } = runnerWork();
    // The first worker dies right after the runner took the request (the answer is never stored).
    const dying: ToolRunStore = {
      ...stores.toolRuns,
      markHanded: async () => {
        throw new Crash('the worker died');
      },
    };
    await expect(runBackgroundTool(run, work, depsOf(dying))).rejects.toBeInstanceOf(Crash);
    // The retry (BullMQ's stalled job, or the sweeper) finds the run stored but not handed over.
    const stored = (await stores.toolRuns.findRun(run.id, null))!;
    expect(stored).toMatchObject({ taskId: run.id, handedAt: null, attempts: 1 });
    expect(await runBackgroundTool(stored, work, depsOf(stores.toolRuns))).toBe('submitted');
    expect(requests.map((request) => request.key)).toEqual([run.id, run.id]);
    expect(started.size).toBe(1);
    // Not started a second time here either: no second attempt, and handed over now.
    expect(await stores.toolRuns.findRun(run.id, null)).toMatchObject({ attempts: 1, handedAt: expect.any(Date) });
    expect(finished).toEqual([]);
    // Once handed, a further job only checks the deadline: no third request.
    const handed = (await stores.toolRuns.findRun(run.id, null))!;
    expect(await runBackgroundTool(handed, work, depsOf(stores.toolRuns))).toBe('polled');
    expect(requests).toHaveLength(2);
  });

  it('a worker dying between storing the key and the request sends it on the retry (the run is not lost)', async () => {
    const { stores, run, depsOf } = await setUp();
    const { work, requests } = runnerWork();
    // The state such a crash leaves: started, key and deadline stored, nothing sent.
    await stores.toolRuns.startRun(run.id);
    await stores.toolRuns.markSubmitted({ runId: run.id, taskId: run.id, timeoutMs: 60_000 });
    const stored = (await stores.toolRuns.findRun(run.id, null))!;
    expect(await runBackgroundTool(stored, work, depsOf(stores.toolRuns))).toBe('submitted');
    expect(requests.map((request) => request.key)).toEqual([run.id]);
  });
});
