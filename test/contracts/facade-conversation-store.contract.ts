import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { MakePortStores } from './port-fixtures';
import { ENCODING, exchange, newThread, pause, send } from './store-fixtures';

/**
 * The FacadeConversationStore contract (the /v1 route's conversation keys, client settings, queued cancels, usage).
 * Its `history` reads have a contract of their own (client-history-store.contract.ts).
 */
export function describeFacadeConversationStoreContract(name: string, make: MakePortStores): void {
  describe(`FacadeConversationStore contract: ${name}`, () => {
    it("lists the threads a user's conversation key reached, most recently active first, with their last text's tail", async () => {
      const stores = make();
      const first = await newThread(stores);
      const { ownerId } = first;
      const key = `key-${randomUUID()}`;
      await pause(5);
      const second = await newThread(stores, { ownerId });
      await newThread(stores, { ownerId }); // a thread of the owner the key never reached
      for (const threadId of [first.id, second.id, first.id])
        await stores.conversations.link({ userId: ownerId, clientKey: key, threadId });
      expect(await stores.conversations.threadsOf({ userId: ownerId, clientKey: key, limit: 10 })).toEqual([
        { threadId: second.id, lastTextTail: null },
        { threadId: first.id, lastTextTail: null },
      ]);
      await pause(5);
      const { answer } = await exchange(stores, first.id, 'q1', `start ${'😀'.repeat(300)}`);
      // The tail counts characters, not UTF-16 units.
      expect(await stores.conversations.threadsOf({ userId: ownerId, clientKey: key, limit: 10 })).toEqual([
        { threadId: first.id, lastTextTail: '😀'.repeat(256) },
        { threadId: second.id, lastTextTail: null },
      ]);
      expect(await stores.conversations.threadsOf({ userId: ownerId, clientKey: key, limit: 1 })).toHaveLength(1);
      // A forgotten answer is no branch's end any more; a queued message (no seq) is not one yet.
      await stores.memory.forget({ threadId: first.id, messageIds: [answer.id] });
      await send(stores, first.id, 'queued');
      expect((await stores.conversations.threadsOf({ userId: ownerId, clientKey: key, limit: 1 }))[0]).toEqual({
        threadId: first.id,
        lastTextTail: 'q1',
      });
      // Another key, another user, a deleted thread: not listed.
      expect(await stores.conversations.threadsOf({ userId: ownerId, clientKey: `${key}-2`, limit: 10 })).toEqual([]);
      expect(await stores.conversations.threadsOf({ userId: 'someone-else', clientKey: key, limit: 10 })).toEqual([]);
      await stores.threads.deleteThread(second.id);
      expect(
        (await stores.conversations.threadsOf({ userId: ownerId, clientKey: key, limit: 10 })).map(
          (row) => row.threadId,
        ),
      ).toEqual([first.id]);
    });

    it("saves the client's settings on the thread, bumping its version only when they change", async () => {
      const stores = make();
      const thread = await newThread(stores);
      const settings = { instructions: 'Answer in French.', tools: [] };
      await stores.conversations.setClientSettings({ threadId: thread.id, settings });
      const saved = await stores.threads.findThread(thread.id, null);
      expect(saved).toMatchObject({ settings: { openaiClient: settings }, version: thread.version + 1 });
      await stores.conversations.setClientSettings({ threadId: thread.id, settings: { ...settings } });
      expect((await stores.threads.findThread(thread.id, null))?.version).toBe(thread.version + 1);
      await stores.conversations.setClientSettings({
        threadId: thread.id,
        settings: { ...settings, instructions: null },
      });
      expect(await stores.threads.findThread(thread.id, null)).toMatchObject({
        settings: { openaiClient: { instructions: null, tools: [] } },
        version: thread.version + 2,
      });
    });

    it('marks a queued turn to end as cancelled when it starts; not one that started', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const done = await exchange(stores, thread.id, 'q1');
      expect(await stores.conversations.cancelQueuedTurn(done.turn.id)).toBe(false);
      expect(await stores.conversations.cancelQueuedTurn(randomUUID())).toBe(false);
      const { turn } = await send(stores, thread.id, 'client went away');
      expect(await stores.conversations.cancelQueuedTurn(turn.id)).toBe(true);
      const started = await stores.turns.nextTurn({ threadId: thread.id, owner: 'runner', ttlMs: 30_000 });
      expect(started).toMatchObject({ outcome: 'started', turn: { id: turn.id, cancelRequested: true } });
    });

    it("sums what the model reported for the turn's chat calls; zeros when nothing was reported", async () => {
      const stores = make();
      const thread = await newThread(stores);
      const { answer, turn } = await exchange(stores, thread.id, 'q1');
      const silent = await exchange(stores, thread.id, 'q2');
      const call = { threadId: thread.id, model: 'm', estimatedPromptTokens: 90, latencyMs: 5 };
      await stores.calls.record({
        ...call,
        messageId: answer.id,
        purpose: 'chat',
        reportedPromptTokens: 100,
        reportedCompletionTokens: 20,
        reportedCachedTokens: 64,
        reportedCacheWriteTokens: 30,
      });
      await stores.calls.record({
        ...call,
        messageId: answer.id,
        purpose: 'chat',
        reportedPromptTokens: 130,
        reportedCompletionTokens: 7,
        overflowRetry: true,
      });
      await stores.calls.record({
        ...call,
        messageId: answer.id,
        purpose: 'summary',
        reportedPromptTokens: 1000,
        reportedCompletionTokens: 1000,
      });
      expect(await stores.conversations.usageOfTurn(turn.id)).toEqual({
        promptTokens: 230,
        completionTokens: 27,
        cachedTokens: 64,
        cacheWriteTokens: 30,
      });
      await stores.calls.record({
        ...call,
        messageId: silent.answer.id,
        purpose: 'chat',
        reportedPromptTokens: null,
        reportedCompletionTokens: null,
      });
      expect(await stores.conversations.usageOfTurn(silent.turn.id)).toEqual({
        promptTokens: 0,
        completionTokens: 0,
        cachedTokens: null,
        cacheWriteTokens: null,
      });
    });

    it('appends messages without a turn: next seqs, complete, in the window; refused while a turn waits or runs', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'q1');
      const call = { id: 'call_1', name: 'get_weather', args: { city: 'Oslo' } };
      const result = await stores.conversations.appendMessages({
        threadId: thread.id,
        ownerId: thread.ownerId,
        messages: [
          { role: 'user', content: 'appended question', tokens: 5, encoding: ENCODING },
          { role: 'assistant', content: 'checking', toolCalls: [call], tokens: 9, encoding: ENCODING },
          { role: 'tool', content: 'sunny', toolCallId: 'call_1', tokens: 4, encoding: ENCODING },
          { role: 'assistant', content: 'It is sunny.', toolCalls: [], tokens: 6, encoding: ENCODING },
        ],
      });
      if (!('appended' in result)) throw new Error(`refused: ${result.refused}`);
      expect(result.appended.map((message) => [message.seq, message.role, message.status, message.turnId])).toEqual([
        [3, 'user', 'complete', null],
        [4, 'assistant', 'complete', null],
        [5, 'tool', 'complete', null],
        [6, 'assistant', 'complete', null],
      ]);
      expect(result.appended[1]?.toolCalls).toEqual([call]);
      expect(result.appended[2]?.toolCallId).toBe('call_1');
      expect((await stores.threads.findThread(thread.id, null))?.lastSeq).toBe(6);
      const context = await stores.turns.loadContext(thread.id);
      expect(context?.window.map((entry) => [entry.seq, entry.role, entry.content, entry.tokens])).toEqual([
        [1, 'user', 'q1', expect.any(Number)],
        [2, 'assistant', expect.any(String), expect.any(Number)],
        [3, 'user', 'appended question', 5],
        [4, 'assistant', 'checking', 9],
        [5, 'tool', 'sunny', 4],
        [6, 'assistant', 'It is sunny.', 6],
      ]);
      expect(context?.window[3]?.toolCalls).toEqual([call]);
      expect(context?.window[4]?.toolCallId).toBe('call_1');
      // Another owner's thread, an unknown one: missing. A queued turn: busy, and nothing is written.
      const one = [{ role: 'user' as const, content: 'x', tokens: 1, encoding: ENCODING }];
      expect(
        await stores.conversations.appendMessages({ threadId: thread.id, ownerId: 'someone-else', messages: one }),
      ).toEqual({ refused: 'missing' });
      expect(
        await stores.conversations.appendMessages({ threadId: randomUUID(), ownerId: thread.ownerId, messages: one }),
      ).toEqual({ refused: 'missing' });
      await send(stores, thread.id, 'waiting');
      expect(
        await stores.conversations.appendMessages({ threadId: thread.id, ownerId: thread.ownerId, messages: one }),
      ).toEqual({ refused: 'busy' });
      expect((await stores.threads.findThread(thread.id, null))?.lastSeq).toBe(6);
    });

    it("counts the user's queued and running turns, in all their threads", async () => {
      const stores = make();
      const first = await newThread(stores);
      const second = await newThread(stores, { ownerId: first.ownerId });
      const stranger = await newThread(stores);
      await exchange(stores, first.id, 'done');
      expect(await stores.conversations.activeTurns(first.ownerId)).toBe(0);
      await send(stores, first.id, 'waiting');
      await send(stores, second.id, 'waiting too');
      await send(stores, stranger.id, 'not theirs');
      expect(await stores.conversations.activeTurns(first.ownerId)).toBe(2);
      await stores.turns.nextTurn({ threadId: first.id, owner: 'runner', ttlMs: 30_000 });
      expect(await stores.conversations.activeTurns(first.ownerId)).toBe(2);
    });

    it("replaces a conversation's metadata in the thread's settings, keeping its version", async () => {
      const stores = make();
      const thread = await newThread(stores);
      await stores.conversations.setClientSettings({ threadId: thread.id, settings: { instructions: 'x', tools: [] } });
      const before = await stores.threads.findThread(thread.id, null);
      await stores.conversations.setConversationMetadata({ threadId: thread.id, metadata: { topic: 'a', lang: 'fr' } });
      await stores.conversations.setConversationMetadata({ threadId: thread.id, metadata: { topic: 'b' } });
      const after = await stores.threads.findThread(thread.id, null);
      expect(after?.settings).toEqual({
        openaiClient: { instructions: 'x', tools: [] },
        conversationMetadata: { topic: 'b' },
      });
      expect(after?.version).toBe(before?.version);
    });
  });
}
