import { describe, expect, it } from 'vitest';
import { deleteThread } from './delete-thread';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('deleteThread', () => {
  it("stops the thread's turns and remote tool work, deletes it, then removes its jobs; failing Redis or remote steps do not fail it", async () => {
    const calls: string[] = [];
    await deleteThread('t-1', {
      log: silent,
      toolRunIdsOf: async (threadId) => {
        calls.push(`runs of ${threadId}`);
        return ['run-1', 'run-2'];
      },
      cancelTurns: (threadId) => calls.push(`cancel ${threadId}`),
      cancelRemoteWork: async (runIds) => {
        calls.push(`remote ${runIds.join(',')}`);
        throw new Error('runner down');
      },
      deleteThread: async (threadId) => {
        calls.push(`delete ${threadId}`);
      },
      removeJobs: async (refs) => {
        calls.push(`jobs ${refs.threadIds.join(',')} ${refs.runIds.join(',')}`);
        throw new Error('redis down');
      },
    });
    // The remote cancels go while the runs' rows still say what to cancel; the jobs after the rows.
    expect(calls).toEqual(['runs of t-1', 'cancel t-1', 'remote run-1,run-2', 'delete t-1', 'jobs t-1 run-1,run-2']);
  });
});
