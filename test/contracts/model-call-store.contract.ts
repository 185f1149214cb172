import { describe, expect, it } from 'vitest';
import type { ModelCallRecord } from '../../src/core/ports';
import type { MakePortStores } from './port-fixtures';
import { newThread } from './store-fixtures';

/** The ModelCallStore contract (every model call is recorded: the admin's token chart and the estimate correction read them). */
export function describeModelCallStoreContract(name: string, make: MakePortStores): void {
  describe(`ModelCallStore contract: ${name}`, () => {
    it('stores every field of a call as given', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const call: ModelCallRecord = {
        threadId: thread.id,
        messageId: null,
        purpose: 'summary',
        model: 'summarizer',
        estimatedPromptTokens: 812,
        reportedPromptTokens: 820,
        reportedCompletionTokens: 64,
        latencyMs: 950,
        summaryRevision: 3,
        windowFromSeq: 4,
        windowThroughSeq: 9,
        pinnedSeqs: [2],
        recalledSeqs: [1, 3],
        omitted: 2,
        overflowRetry: true,
        error: null,
      };
      await stores.calls.record(call);
      expect(await stores.storedCalls(thread.id)).toEqual([call]);
    });

    it('fills what a call leaves out with the defaults (no manifest: null, [], 0, false) and keeps an error', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await stores.calls.record({
        threadId: thread.id,
        messageId: null,
        purpose: 'chat',
        model: 'gpt-4o-mini',
        estimatedPromptTokens: 100,
        reportedPromptTokens: null,
        reportedCompletionTokens: null,
        latencyMs: null,
        error: 'context_length_exceeded',
      });
      expect(await stores.storedCalls(thread.id)).toEqual([
        {
          threadId: thread.id,
          messageId: null,
          purpose: 'chat',
          model: 'gpt-4o-mini',
          estimatedPromptTokens: 100,
          reportedPromptTokens: null,
          reportedCompletionTokens: null,
          latencyMs: null,
          summaryRevision: null,
          windowFromSeq: null,
          windowThroughSeq: null,
          pinnedSeqs: [],
          recalledSeqs: [],
          omitted: 0,
          overflowRetry: false,
          error: 'context_length_exceeded',
        },
      ]);
    });

    it("keeps a deleted thread's calls for its owner, detached from the thread and without their error text", async () => {
      const stores = make();
      const thread = await newThread(stores);
      await stores.calls.record({
        threadId: thread.id,
        messageId: null,
        purpose: 'condense',
        model: 'm',
        estimatedPromptTokens: 7,
        reportedPromptTokens: 8,
        reportedCompletionTokens: 9,
        latencyMs: 1,
        error: 'provider said: the secret plan',
      });
      expect(await stores.storedCalls(thread.id)).toHaveLength(1);
      await stores.threads.deleteThread(thread.id);
      expect(await stores.storedCalls(thread.id)).toEqual([]);
      const kept = await stores.storedCallsOfUser(thread.ownerId);
      expect(kept).toHaveLength(1);
      expect(kept[0]).toMatchObject({ threadId: null, purpose: 'condense', model: 'm', estimatedPromptTokens: 7 });
      expect(kept[0]).toMatchObject({ reportedPromptTokens: 8, reportedCompletionTokens: 9 });
      expect(kept[0]?.error).not.toContain('secret');
    });

    it('records a call of no thread for the user it names', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await stores.calls.record({
        threadId: null,
        userId: thread.ownerId,
        messageId: null,
        purpose: 'auxiliary',
        model: 'm',
        estimatedPromptTokens: 5,
        reportedPromptTokens: null,
        reportedCompletionTokens: null,
        latencyMs: 3,
      });
      expect(await stores.storedCallsOfUser(thread.ownerId)).toMatchObject([
        { threadId: null, purpose: 'auxiliary', estimatedPromptTokens: 5 },
      ]);
    });
  });
}
