import { describe, expect, it } from 'vitest';
import type { MakePortStores, PortStores } from './port-fixtures';
import { codeOf, exchange, foldCommit, newThread, send } from './store-fixtures';

/** A thread of three exchanges (#1–#6), the first two folded into revision 1. */
async function foldedThread(stores: PortStores) {
  const thread = await newThread(stores);
  for (const question of ['q1', 'q2', 'q3']) await exchange(stores, thread.id, question);
  expect(await stores.summaries.commit(foldCommit(thread.id, thread.version, 4))).toEqual({
    committed: true,
    revision: 1,
  });
  return thread;
}

const versionOf = async (stores: PortStores, threadId: string) =>
  (await stores.threads.findThread(threadId, null))?.version ?? -1;

/** The MemoryControlsStore contract (pins, settings, fresh context, forget, regenerate). */
export function describeMemoryControlsStoreContract(name: string, make: MakePortStores): void {
  describe(`MemoryControlsStore contract: ${name}`, () => {
    it("reads messages by seq, a user message's answers and the last user message", async () => {
      const stores = make();
      const thread = await newThread(stores);
      const first = await exchange(stores, thread.id, 'q1', 'a1');
      await exchange(stores, thread.id, 'q2', 'a2');
      await send(stores, thread.id, 'queued, no seq yet');
      expect(
        (await stores.memory.listMessagesBySeq({ threadId: thread.id, fromSeq: 2, throughSeq: 3 })).map(
          (message) => message.content,
        ),
      ).toEqual(['a1', 'q2']);
      expect((await stores.memory.findMessagesBySeq(thread.id, [4, 1])).map((message) => message.content)).toEqual([
        'q1',
        'a2',
      ]);
      expect((await stores.memory.listAnswers(thread.id, first.user.id)).map((message) => message.content)).toEqual([
        'a1',
      ]);
      expect((await stores.memory.lastUserMessage(thread.id))?.content).toBe('q2');
    });

    it('pins within the cap (a folded message comes back into the context), refuses past it, and unpins', async () => {
      const stores = make();
      const thread = await foldedThread(stores);
      const before = await versionOf(stores, thread.id);
      // #1 was folded: its entry is made again from the transcript, pinned; #5 is in the window.
      const pinned = await stores.memory.pin({ threadId: thread.id, seqs: [1, 5], maxPinnedTokens: 10 });
      expect(pinned).toMatchObject({ pinned: true, pinnedTokens: 'q1'.length + 'q3'.length });
      expect(pinned.pinned && pinned.messages.map((message) => [message.seq, message.pinned])).toEqual([
        [1, true],
        [5, true],
      ]);
      expect(await versionOf(stores, thread.id)).toBe(before + 1);
      const context = await stores.turns.loadContext(thread.id);
      expect(context?.pinned.map((entry) => [entry.seq, entry.content, entry.pinned])).toEqual([
        [1, 'q1', true],
        [5, 'q3', true],
      ]);
      expect(context?.window.map((entry) => entry.seq)).toEqual([6]);
      expect(await stores.memory.pinnedTokens(thread.id)).toBe(4);
      // 'answer to q3' (12 tokens) would pass the cap: nothing changes.
      expect(await stores.memory.pin({ threadId: thread.id, seqs: [6], maxPinnedTokens: 10 })).toEqual({
        pinned: false,
        pinnedTokens: 4,
        addedTokens: 12,
      });
      const unpinned = await stores.memory.unpin({ threadId: thread.id, seqs: [5] });
      expect(unpinned.messages.map((message) => [message.seq, message.pinned])).toEqual([[5, false]]);
      expect(unpinned.pinnedTokens).toBe(2);
      expect((await stores.turns.loadContext(thread.id))?.window.map((entry) => entry.seq)).toEqual([5, 6]);
    });

    it('saves settings and the memory mode, bumping the version', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const updated = await stores.memory.updateSettings({
        threadId: thread.id,
        settings: { trigger: 'messages=8', recallTokens: 0 },
        memoryMode: 'window-only',
      });
      expect(updated).toMatchObject({
        settings: { trigger: 'messages=8', recallTokens: 0 },
        memoryMode: 'window-only',
        version: thread.version + 1,
      });
    });

    it('starts a fresh context after the last message, once, and undoes it until the next message', async () => {
      const stores = make();
      const thread = await foldedThread(stores);
      const reset = await stores.memory.resetContext(thread.id);
      expect(reset).toMatchObject({
        contextStartSeq: 7,
        summary: { text: '', tokens: 0, coveredThroughSeq: 6, revision: 1 },
      });
      expect((await stores.turns.loadContext(thread.id))?.window).toEqual([]);
      // A second fresh context with nothing said since changes nothing.
      expect((await stores.memory.resetContext(thread.id)).version).toBe(reset.version);
      const undone = await stores.memory.undoContextReset(thread.id);
      expect(undone).toMatchObject({
        contextStartSeq: 1,
        summary: { text: 'Summary through #4.', tokens: 6, coveredThroughSeq: 4, revision: 1 },
      });
      expect(await stores.memory.undoContextReset(thread.id)).toBeNull();
      // After a message the fresh context is final.
      await stores.memory.resetContext(thread.id);
      await exchange(stores, thread.id, 'q4');
      expect(await stores.memory.undoContextReset(thread.id)).toBeNull();
    });

    it('forgets: tombstones, context entries gone, revisions that may hold them redacted, the summary withdrawn until a rebuild', async () => {
      const stores = make();
      const thread = await foldedThread(stores);
      const [answer] = await stores.memory.findMessagesBySeq(thread.id, [2]);
      const forgotten = await stores.memory.forget({ threadId: thread.id, messageIds: [answer!.id] });
      expect(forgotten.messages).toEqual([
        expect.objectContaining({ id: answer!.id, content: '', deleted: true, pinned: false }),
      ]);
      expect(forgotten.redactedRevisions).toBe(1);
      expect(forgotten.thread.summary).toMatchObject({ text: '', tokens: 0, revision: 1 });
      expect(
        (await stores.exportReader.revisionsAfter({ threadId: thread.id, afterRevision: 0, limit: 5 }))[0],
      ).toMatchObject({ text: '', redacted: true });
      expect(await stores.memory.threadsAwaitingRebuild(1000)).toContainEqual({
        threadId: thread.id,
        version: forgotten.thread.version,
      });
      // A message of the window: its entry leaves the context; nothing left to redact.
      const [inWindow] = await stores.memory.findMessagesBySeq(thread.id, [5]);
      const again = await stores.memory.forget({ threadId: thread.id, messageIds: [inWindow!.id] });
      expect(again.redactedRevisions).toBe(0);
      expect((await stores.turns.loadContext(thread.id))?.window.map((entry) => entry.seq)).toEqual([6]);
      // Forgetting a forgotten message changes nothing.
      expect((await stores.memory.forget({ threadId: thread.id, messageIds: [answer!.id] })).messages).toEqual([]);
    });

    it('queues a regenerate of the last answer only, superseding it; refuses while a turn is queued', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const first = await exchange(stores, thread.id, 'q1', 'a1');
      const last = await exchange(stores, thread.id, 'q2', 'a2');
      expect(await codeOf(stores.memory.queueRegenerate({ threadId: thread.id, userMessageId: first.user.id }))).toBe(
        'CONFLICT',
      );
      const queued = await stores.memory.queueRegenerate({ threadId: thread.id, userMessageId: last.user.id });
      expect(queued.turn).toMatchObject({
        threadId: thread.id,
        kind: 'regenerate',
        userMessageId: last.user.id,
        status: 'queued',
      });
      expect(queued.superseded.map((message) => [message.content, message.superseded])).toEqual([['a2', true]]);
      expect((await stores.turns.loadContext(thread.id))?.window.map((entry) => entry.seq)).toEqual([1, 2, 3]);
      expect(await codeOf(stores.memory.queueRegenerate({ threadId: thread.id, userMessageId: last.user.id }))).toBe(
        'BUSY',
      );
    });
  });
}
