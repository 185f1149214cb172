import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Thread, TranscriptMessage } from '../../src/core/domain/types';
import type { ChatCallRecord } from '../../src/core/ports';
import type { MakePortStores, PortStores } from './port-fixtures';
import { codeOf, ENCODING, exchange, newThread, send } from './store-fixtures';

const SYSTEM_PROMPT = 'You are a terse assistant. Internal: never mention the staging host.';

const PARTS = { systemPrefix: 14, summary: 0, pinned: 9, window: 30, recall: 8, notes: 0, priming: 3, toolSchemas: 0 };

/**
 * A thread of three exchanges whose third answer (#6) was produced by a chat call stored with it, as the turn runner
 * stores it: #1 pinned, #2 recalled, #3–#5 in the window, one other chat's message recalled and the user's saved
 * memories carried. The first two answers have no chat call (as answers written before calls were stored).
 */
async function answeredWithCall(
  stores: PortStores,
  extra: { ownerId?: string; savedMemoryIds?: string[]; elsewhere?: Thread } = {},
) {
  const thread = await newThread(stores, extra.ownerId ? { ownerId: extra.ownerId } : {});
  const first = await exchange(stores, thread.id, 'first question');
  const second = await exchange(stores, thread.id, 'second question');
  const owner = `process-${randomUUID()}`;
  await send(stores, thread.id, 'third question');
  const started = await stores.turns.nextTurn({ threadId: thread.id, owner, ttlMs: 30_000 });
  if (started.outcome !== 'started' || !started.userMessage) throw new Error('no turn started');
  const streaming = await stores.turns.appendTurnMessage({
    threadId: thread.id,
    turnId: started.turn.id,
    role: 'assistant',
    content: '',
    status: 'streaming',
  });
  const text = 'third answer';
  const call: ChatCallRecord = {
    threadId: thread.id,
    messageId: null,
    purpose: 'chat',
    model: 'gpt-contract',
    estimatedPromptTokens: 64,
    reportedPromptTokens: 70,
    reportedCompletionTokens: 3,
    latencyMs: 420,
    summaryRevision: null,
    windowFromSeq: 3,
    windowThroughSeq: 5,
    pinnedSeqs: [1],
    recalledSeqs: [2],
    omitted: 1,
    overflowRetry: false,
    error: null,
    manifest: {
      systemPrefix: { text: SYSTEM_PROMPT, tokens: 14 },
      windowSeqs: [3, 4, 5],
      toolResults: [],
      parts: PARTS,
      savedMemoryIds: extra.savedMemoryIds ?? [],
      recalledElsewhere: extra.elsewhere ? [{ threadId: extra.elsewhere.id, seq: 1 }] : [],
    },
  };
  const answer = await stores.turns.finishMessage({
    messageId: streaming.id,
    content: text,
    status: 'complete',
    tokens: text.length,
    encoding: ENCODING,
    entry: { role: 'assistant', content: text, tokens: text.length },
    call,
  });
  await stores.turns.completeTurn({ turnId: started.turn.id, threadId: thread.id, owner, ttlMs: 30_000 });
  const messages: TranscriptMessage[] = [first.user, first.answer, second.user, second.answer, started.userMessage];
  return { thread, answer, messages };
}

/** What the reader shows of a message the call was given (as it stands now, not forgotten). */
const seen = (message: TranscriptMessage, place: 'pinned' | 'recalled' | 'window') => ({
  seq: message.seq,
  role: message.role,
  place,
  messageId: message.id,
  forgotten: false,
  content: message.content,
});

/**
 * The MessageContextReader contract: "what the model saw" for one reply (GET …/messages/:id/context, for the owner
 * and for admins), the call's manifest as recorded read against the transcript as it stands now. Adapter-only (not
 * held here): `at` is the call row's `created_at` in Postgres and the answer's completion in the fake (only its form
 * is checked); the summary revision's join and the newest of several chat calls of one answer are not exercised.
 */
export function describeMessageContextReaderContract(name: string, make: MakePortStores): void {
  describe(`MessageContextReader contract: ${name}`, () => {
    it('is NOT_FOUND for a message no chat call produced: a user message, an answer without a call, another thread', async () => {
      const stores = make();
      const { thread, answer, messages } = await answeredWithCall(stores);
      const other = await newThread(stores, { ownerId: thread.ownerId });
      const options = { systemPromptText: false };
      expect(await codeOf(stores.messageContext.forMessage(thread.id, messages[4]!.id, options))).toBe('NOT_FOUND');
      expect(await codeOf(stores.messageContext.forMessage(thread.id, messages[3]!.id, options))).toBe('NOT_FOUND');
      expect(await codeOf(stores.messageContext.forMessage(other.id, answer.id, options))).toBe('NOT_FOUND');
      expect(await codeOf(stores.messageContext.forMessage(thread.id, randomUUID(), options))).toBe('NOT_FOUND');
    });

    it('shows the call as recorded: its model and tokens, the pinned, recalled and window seqs with their messages', async () => {
      const stores = make();
      const { thread, answer, messages } = await answeredWithCall(stores);
      const { at, ...context } = await stores.messageContext.forMessage(thread.id, answer.id, {
        systemPromptText: false,
      });
      expect(new Date(at).toISOString()).toBe(at);
      const [first, firstAnswer, second, secondAnswer, third] = messages as [
        TranscriptMessage,
        TranscriptMessage,
        TranscriptMessage,
        TranscriptMessage,
        TranscriptMessage,
      ];
      expect(context).toEqual({
        messageId: answer.id,
        model: 'gpt-contract',
        estimatedPromptTokens: 64,
        reportedPromptTokens: 70,
        reportedCompletionTokens: 3,
        reportedCachedTokens: null,
        reportedCacheWriteTokens: null,
        promptDivergence: null,
        overflowRetry: false,
        omitted: 1,
        systemPrefix: { hash: expect.any(String), text: null, tokens: 14 },
        summary: null,
        windowSeqs: [3, 4, 5],
        pinnedSeqs: [1],
        recalledSeqs: [2],
        recalledElsewhere: [],
        savedMemories: [],
        messages: [
          seen(first, 'pinned'),
          seen(firstAnswer, 'recalled'),
          seen(second, 'window'),
          seen(secondAnswer, 'window'),
          seen(third, 'window'),
        ],
        toolResults: [],
        parts: PARTS,
      });
    });

    it("gives the system prompt's text only when asked (admins), its hash and tokens always", async () => {
      const stores = make();
      const { thread, answer } = await answeredWithCall(stores);
      const hash = createHash('sha256').update(SYSTEM_PROMPT).digest('hex');
      const owner = await stores.messageContext.forMessage(thread.id, answer.id, { systemPromptText: false });
      const admin = await stores.messageContext.forMessage(thread.id, answer.id, { systemPromptText: true });
      expect(owner.systemPrefix).toEqual({ hash, text: null, tokens: 14 });
      expect(admin.systemPrefix).toEqual({ hash, text: SYSTEM_PROMPT, tokens: 14 });
    });

    it('shows a message forgotten since as forgotten, without its content, at its place in the call', async () => {
      const stores = make();
      const { thread, answer, messages } = await answeredWithCall(stores);
      const forgotten = messages[2]!;
      await stores.memory.forget({ threadId: thread.id, messageIds: [forgotten.id] });
      const context = await stores.messageContext.forMessage(thread.id, answer.id, { systemPromptText: false });
      expect(context.windowSeqs).toEqual([3, 4, 5]);
      expect(context.messages.find((message) => message.seq === 3)).toEqual({
        seq: 3,
        role: 'user',
        place: 'window',
        messageId: forgotten.id,
        forgotten: true,
        content: null,
      });
      expect(context.messages.filter((message) => message.forgotten).map((message) => message.seq)).toEqual([3]);
      expect(JSON.stringify(context)).not.toContain('"second question"');
    });

    it('names the saved memories and other chats the call carried as they stand now (a deleted memory: no text)', async () => {
      const stores = make();
      const elsewhere = await newThread(stores, { title: 'Trip planning' });
      await exchange(stores, elsewhere.id, 'where to go');
      const create = (text: string) =>
        stores.savedMemories.create({
          userId: elsewhere.ownerId,
          text,
          tokens: 4,
          source: null,
          maxItems: 10,
          status: 'active',
        });
      const kept = await create('Prefers trains');
      const removed = await create('Lives in Lyon');
      if (!kept || !removed) throw new Error('saved memories not created');
      const { thread, answer } = await answeredWithCall(stores, {
        ownerId: elsewhere.ownerId,
        savedMemoryIds: [kept.id, removed.id],
        elsewhere,
      });
      expect(await stores.savedMemories.remove({ userId: elsewhere.ownerId, id: removed.id })).toBe(true);
      const context = await stores.messageContext.forMessage(thread.id, answer.id, { systemPromptText: false });
      expect(context.savedMemories).toEqual([
        { id: kept.id, text: 'Prefers trains' },
        { id: removed.id, text: null },
      ]);
      expect(context.recalledElsewhere).toEqual([{ threadId: elsewhere.id, seq: 1, title: 'Trip planning' }]);
    });

    it("shows an answer copied into a fork with the call that produced it, read against the fork's own messages", async () => {
      const stores = make();
      const { thread, answer } = await answeredWithCall(stores);
      const forked = await stores.forks.forkThread({
        parentId: thread.id,
        ownerId: thread.ownerId,
        throughSeq: 6,
        title: 'Branch',
        maxThreads: 100,
      });
      if (!('thread' in forked)) throw new Error(`fork refused: ${forked.refused}`);
      const copies = await stores.memory.listMessagesBySeq({ threadId: forked.thread.id, fromSeq: 1, throughSeq: 6 });
      const copy = copies.find((message) => message.seq === 6)!;
      expect(copy.id).not.toBe(answer.id);
      await stores.memory.forget({ threadId: forked.thread.id, messageIds: [copies.find((m) => m.seq === 1)!.id] });
      const context = await stores.messageContext.forMessage(forked.thread.id, copy.id, { systemPromptText: false });
      expect(context.messageId).toBe(copy.id);
      expect(context.model).toBe('gpt-contract');
      expect(context.messages.map((message) => [message.seq, message.messageId, message.forgotten])).toEqual(
        [1, 2, 3, 4, 5].map((seq) => [seq, copies.find((message) => message.seq === seq)!.id, seq === 1]),
      );
      // The parent's answer still shows its own first message.
      const parent = await stores.messageContext.forMessage(thread.id, answer.id, { systemPromptText: false });
      expect(parent.messages[0]).toMatchObject({ seq: 1, forgotten: false, content: 'first question' });
    });
  });
}
