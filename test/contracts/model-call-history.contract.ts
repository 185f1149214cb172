import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ModelCallRecord } from '../../src/core/ports';
import type { MakePortStores, PortStores } from './port-fixtures';
import { codeOf, exchange, newThread, pause } from './store-fixtures';

/**
 * Records a call of the thread (a summary of model `m`, no usage reported unless given), 2 ms after the last write:
 * created_at has milliseconds, and calls of one millisecond have no order a case can rely on (Postgres: by their
 * random id; the fake: as stored).
 */
async function call(stores: PortStores, threadId: string | null, fields: Partial<ModelCallRecord> = {}) {
  await pause(2);
  await stores.calls.record({
    threadId,
    messageId: null,
    purpose: 'summary',
    model: 'm',
    estimatedPromptTokens: 0,
    reportedPromptTokens: null,
    reportedCompletionTokens: null,
    latencyMs: 1,
    ...fields,
  });
}

/**
 * The ModelCallHistory contract (the admin's tokens chart of a thread, and the prompt counts the estimate correction
 * reads). What Postgres alone does: a chat call stored with its answer (TurnStore.finishMessage) stands where the
 * answer started, before the answer's own tokens; the fake places it so too, but no case here writes one (the turn
 * store's contract covers the stored call); and a keyset cursor stays valid after its call is gone.
 */
export function describeModelCallHistoryContract(name: string, make: MakePortStores): void {
  describe(`ModelCallHistory contract: ${name}`, () => {
    it("pages a thread's calls newest first, oldest first within a page, and refuses a cursor it did not hand out", async () => {
      const stores = make();
      const thread = await newThread(stores);
      const other = await newThread(stores);
      for (const tokens of [1, 2, 3, 4, 5]) await call(stores, thread.id, { estimatedPromptTokens: tokens });
      await call(stores, other.id, { estimatedPromptTokens: 99 });
      const tokensOf = (page: { calls: { promptTokens: number }[] }) => page.calls.map((point) => point.promptTokens);

      const newest = await stores.callHistory.listForThread({ threadId: thread.id, limit: 2 });
      expect(tokensOf(newest)).toEqual([4, 5]);
      expect(newest.nextCursor).toEqual(expect.any(String));
      const before = newest.nextCursor ?? '';
      const middle = await stores.callHistory.listForThread({ threadId: thread.id, before, limit: 2 });
      expect(tokensOf(middle)).toEqual([2, 3]);
      const oldest = await stores.callHistory.listForThread({
        threadId: thread.id,
        before: middle.nextCursor ?? '',
        limit: 2,
      });
      expect(oldest).toMatchObject({ nextCursor: null });
      expect(tokensOf(oldest)).toEqual([1]);
      expect(await codeOf(stores.callHistory.listForThread({ threadId: thread.id, before: 'x', limit: 2 }))).toBe(
        'VALIDATION',
      );
    });

    it("shows the provider's prompt tokens where it reported them, else the estimate, with the cache reads and writes as reported", async () => {
      const stores = make();
      const thread = await newThread(stores);
      await call(stores, thread.id, {
        purpose: 'condense',
        model: 'condenser',
        estimatedPromptTokens: 100,
        reportedPromptTokens: 120,
        reportedCachedTokens: 30,
        reportedCacheWriteTokens: 10,
      });
      await call(stores, thread.id, { estimatedPromptTokens: 80, reportedPromptTokens: 0 });
      await call(stores, thread.id, { estimatedPromptTokens: 70 });
      const { calls } = await stores.callHistory.listForThread({ threadId: thread.id, limit: 10 });
      expect(calls).toMatchObject([
        {
          purpose: 'condense',
          model: 'condenser',
          messageId: null,
          promptTokens: 120,
          promptTokensSource: 'provider',
          estimatedPromptTokens: 100,
          reportedCachedTokens: 30,
          reportedCacheWriteTokens: 10,
          toolSchemaTokens: null,
        },
        { promptTokens: 80, promptTokensSource: 'estimate', estimatedPromptTokens: 80 },
        {
          promptTokens: 70,
          promptTokensSource: 'estimate',
          reportedCachedTokens: null,
          reportedCacheWriteTokens: null,
        },
      ]);
      const ids = calls.map((point) => point.id);
      expect(new Set(ids).size).toBe(3);
      const times = calls.map((point) => Date.parse(point.at));
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });

    it('places each call on the transcript: the tokens and the last seq of the messages stored before it', async () => {
      const stores = make();
      const thread = await newThread(stores);
      // Apart by a few milliseconds: a call and a message of the same millisecond stand messages first.
      await call(stores, thread.id, { estimatedPromptTokens: 1 });
      await pause(2);
      await exchange(stores, thread.id, 'hello', 'hi there'); // 5 + 8 tokens, seqs 1 and 2
      await call(stores, thread.id, { estimatedPromptTokens: 2 });
      await pause(2);
      await exchange(stores, thread.id, 'again', 'once more'); // 5 + 9 tokens, seqs 3 and 4
      await call(stores, thread.id, { estimatedPromptTokens: 3 });
      const { calls } = await stores.callHistory.listForThread({ threadId: thread.id, limit: 10 });
      expect(calls.map(({ transcriptTokens, throughSeq }) => ({ transcriptTokens, throughSeq }))).toEqual([
        { transcriptTokens: 0, throughSeq: 0 },
        { transcriptTokens: 13, throughSeq: 2 },
        { transcriptTokens: 27, throughSeq: 4 },
      ]);
    });

    it("reads a model's newest chat calls with a reported prompt count and no error, oldest first, with whom they were for", async () => {
      const stores = make();
      const model = `m${randomUUID().slice(0, 8)}`;
      const thread = await newThread(stores);
      const someone = (await newThread(stores)).ownerId;
      const chat = { model, purpose: 'chat' as const };
      await call(stores, thread.id, { ...chat, estimatedPromptTokens: 100, reportedPromptTokens: 110 });
      await call(stores, thread.id, { ...chat, estimatedPromptTokens: 200 });
      await call(stores, thread.id, { model, estimatedPromptTokens: 300, reportedPromptTokens: 310 });
      await call(stores, thread.id, { ...chat, estimatedPromptTokens: 400, reportedPromptTokens: 0 });
      await call(stores, thread.id, { ...chat, estimatedPromptTokens: 500, reportedPromptTokens: 510, error: 'boom' });
      await call(stores, thread.id, {
        ...chat,
        model: `${model}-other`,
        estimatedPromptTokens: 1,
        reportedPromptTokens: 2,
      });
      await call(stores, null, { ...chat, userId: someone, estimatedPromptTokens: 600, reportedPromptTokens: 610 });
      await call(stores, thread.id, { ...chat, estimatedPromptTokens: 700, reportedPromptTokens: 710 });

      expect(await stores.callHistory.recentPromptCounts({ model, limit: 2 })).toEqual([
        { estimated: 600, reported: 610, ownerId: someone },
        { estimated: 700, reported: 710, ownerId: thread.ownerId },
      ]);
      expect(await stores.callHistory.recentPromptCounts({ model, limit: 10 })).toEqual([
        { estimated: 100, reported: 110, ownerId: thread.ownerId },
        { estimated: 600, reported: 610, ownerId: someone },
        { estimated: 700, reported: 710, ownerId: thread.ownerId },
      ]);
    });
  });
}
