import { describe, expect, it } from 'vitest';
import { ENCODING, exchange, newThread, send, type MakeStores, type SetCreatedAt } from './store-fixtures';

/** The TranscriptStore contract (history pages, catch-up of reconnecting tabs, summary rebuilds). */
export function describeTranscriptStoreContract(name: string, make: MakeStores, setCreatedAt: SetCreatedAt): void {
  describe(`TranscriptStore contract: ${name}`, () => {
    it('pages the transcript ascending by seq: the newest page with pending messages last, pages before, catch-up after', async () => {
      const stores = make();
      const thread = await newThread(stores);
      for (let turn = 1; turn <= 3; turn += 1) await exchange(stores, thread.id, `q${turn}`, `a${turn}`);
      await send(stores, thread.id, 'queued');
      const contents = (page: { messages: { content: string }[] }) => page.messages.map((message) => message.content);

      const newest = await stores.transcript.listMessages({ threadId: thread.id, limit: 4 });
      expect(contents(newest)).toEqual(['q2', 'a2', 'q3', 'a3', 'queued']);
      expect(newest.messages.map((message) => message.seq)).toEqual([3, 4, 5, 6, null]);
      expect([newest.hasMoreBefore, newest.hasMoreAfter]).toEqual([true, false]);

      const before = await stores.transcript.listMessages({ threadId: thread.id, before: 3, limit: 4 });
      expect(contents(before)).toEqual(['q1', 'a1']);
      expect([before.hasMoreBefore, before.hasMoreAfter]).toEqual([false, true]);
      const middle = await stores.transcript.listMessages({ threadId: thread.id, before: 5, limit: 1 });
      expect(contents(middle)).toEqual(['a2']);
      expect([middle.hasMoreBefore, middle.hasMoreAfter]).toEqual([true, true]);

      const after = await stores.transcript.listMessages({ threadId: thread.id, after: 4, limit: 10 });
      expect(contents(after)).toEqual(['q3', 'a3', 'queued']);
      expect([after.hasMoreBefore, after.hasMoreAfter]).toEqual([true, false]);
      // A page that does not reach the end leaves the pending messages for the next one.
      const partial = await stores.transcript.listMessages({ threadId: thread.id, after: 0, limit: 2 });
      expect(contents(partial)).toEqual(['q1', 'a1']);
      expect([partial.hasMoreBefore, partial.hasMoreAfter]).toEqual([false, true]);
    });

    it('lists pending messages last, in the order they were accepted (the order they will take seqs in)', async () => {
      const stores = make();
      const thread = await newThread(stores);
      await exchange(stores, thread.id, 'q1', 'a1');
      const first = await send(stores, thread.id, 'first waiting');
      const second = await send(stores, thread.id, 'second waiting');
      // The later send's transaction began first: its rows carry the earlier timestamp.
      const at = Date.now();
      await setCreatedAt(stores, { turnIds: [first.turn.id], messageIds: [first.message.id] }, new Date(at));
      await setCreatedAt(stores, { turnIds: [second.turn.id], messageIds: [second.message.id] }, new Date(at - 1000));
      const contents = (page: { messages: { content: string; seq: number | null }[] }) =>
        page.messages.map((message) => [message.seq, message.content]);
      const expected = [
        [1, 'q1'],
        [2, 'a1'],
        [null, 'first waiting'],
        [null, 'second waiting'],
      ];
      expect(contents(await stores.transcript.listMessages({ threadId: thread.id, limit: 50 }))).toEqual(expected);
      expect(contents(await stores.transcript.listMessages({ threadId: thread.id, after: 0, limit: 50 }))).toEqual(
        expected,
      );
    });

    it('finds a message within its thread only, and lists the messages a turn produced', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const other = await newThread(stores);
      const { user, answer, turn } = await exchange(stores, thread.id, 'hello');
      expect((await stores.transcript.findMessage(thread.id, user.id))?.content).toBe('hello');
      expect(await stores.transcript.findMessage(other.id, user.id)).toBeNull();
      expect((await stores.transcript.listTurnMessages(turn.id)).map((message) => message.id)).toEqual([answer.id]);
    });

    it('renders the summarizable range as entries: finished messages with content, ascending, nothing pending or streaming', async () => {
      const stores = make();
      const thread = await newThread(stores);
      const { turn } = await exchange(stores, thread.id, 'first question', 'first answer');
      await stores.turns.appendTurnMessage({
        threadId: thread.id,
        turnId: turn.id,
        role: 'assistant',
        content: 'still streaming',
        status: 'streaming',
      });
      await exchange(stores, thread.id, 'second question', 'second answer');
      await send(stores, thread.id, 'pending');
      const entries = await stores.transcript.listSummarizableEntries({
        threadId: thread.id,
        fromSeq: 1,
        throughSeq: 100,
      });
      expect(entries).toEqual([
        { seq: 1, role: 'user', content: 'first question', tokens: 14, tokenEncoding: ENCODING },
        { seq: 2, role: 'assistant', content: 'first answer', tokens: 12, tokenEncoding: ENCODING },
        { seq: 4, role: 'user', content: 'second question', tokens: 15, tokenEncoding: ENCODING },
        { seq: 5, role: 'assistant', content: 'second answer', tokens: 13, tokenEncoding: ENCODING },
      ]);
      const bounded = await stores.transcript.listSummarizableEntries({
        threadId: thread.id,
        fromSeq: 2,
        throughSeq: 4,
      });
      expect(bounded.map((entry) => entry.seq)).toEqual([2, 4]);
    });
  });
}
